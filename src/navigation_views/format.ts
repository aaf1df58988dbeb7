import type { NavigationView } from './tables.ts';

/** The views every client has; a user may pin or hide them, not rename them. */
export const BUILT_IN_VIEW_FRAGMENTS: ReadonlySet<string> = new Set([
  'inbox',
  'recent',
  'feed',
  'drafts',
  'narrow/has/reaction/sender/me',
  'narrow/is/mentioned',
  'narrow/is/starred',
  'scheduled',
  'reminders',
]);

export const MAX_FRAGMENT_LENGTH = 1000;
export const MAX_VIEW_NAME_LENGTH = 100;

/** The API shape: `name` is omitted for built-in views (spec "Navigation view"). */
export interface ApiNavigationView {
  fragment: string;
  is_pinned: boolean;
  name?: string;
}

export function formatNavigationView(v: NavigationView): ApiNavigationView {
  return { fragment: v.fragment, is_pinned: v.is_pinned, ...(v.name !== null ? { name: v.name } : {}) };
}
