// Builds the web client into web/dist, which the Confab server serves at /.
// Everything the page loads comes from here: no CDN, no outside fonts.
import { defineConfig, type Plugin } from 'vite';

/** `virtual:emoji-names`: the server's own emoji names and codes, so both agree. */
function emojiNames(): Plugin {
  const id = 'virtual:emoji-names';
  return {
    name: 'confab-emoji-names',
    resolveId: (source) => (source === id ? '\0' + id : null),
    async load(source) {
      if (source !== '\0' + id) return null;
      const emoji = await import('../src/markdown/emoji.ts');
      const rows = emoji.emojiNames().map((name: string) => [name, emoji.emojiCodeForName(name)]);
      return `export default ${JSON.stringify(rows)};`;
    },
  };
}

export default defineConfig({
  base: '/',
  plugins: [emojiNames()],
  oxc: { jsx: { runtime: 'automatic', importSource: 'preact' } },
  build: { outDir: 'dist', emptyOutDir: true, assetsInlineLimit: 0, sourcemap: false, target: 'es2022' },
  server: {
    proxy: {
      '/json': 'http://127.0.0.1:9991',
      '/accounts': 'http://127.0.0.1:9991',
      '/user_uploads': 'http://127.0.0.1:9991',
      '/avatar': 'http://127.0.0.1:9991',
    },
  },
});
