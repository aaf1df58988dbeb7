// Light, dark, or the system's choice; remembered in this browser.
export type Theme = 'light' | 'dark' | 'system';

export function applyTheme(theme: string | null): void {
  const t = theme === 'light' || theme === 'dark' ? theme : window.matchMedia('(prefers-color-scheme: dark)').matches ? 'dark' : 'light';
  document.documentElement.dataset.theme = t;
}

export function setTheme(theme: Theme): void {
  localStorage.setItem('confab-theme', theme);
  applyTheme(theme);
}
