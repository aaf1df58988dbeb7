import type { Generated, Selectable } from 'kysely';

/** A user's settings for a view of the left sidebar: a built-in one, or a custom one with a name. */
export interface NavigationViewTable {
  id: Generated<number>;
  realm_id: number;
  user_id: number;
  /** The URL hash the view opens ("inbox", "narrow/is/starred", ...). */
  fragment: string;
  is_pinned: boolean;
  /** Null for the built-in views. */
  name: string | null;
}

export interface NavigationViewTables {
  navigation_views: NavigationViewTable;
}

export type NavigationView = Selectable<NavigationViewTable>;
