// Register's `navigation_views` (feature level 390), kept current by `navigation_view` events.

import type { StateSection } from '../events/state.ts';
import { listNavigationViews } from './queries.ts';
import { formatNavigationView, type ApiNavigationView } from './format.ts';

export const navigationViewsSection: StateSection<{ navigation_views: ApiNavigationView[] }> = {
  types: ['navigation_views'],
  async fetch(ctx) {
    if (!ctx.user) return { navigation_views: [] };
    return { navigation_views: (await listNavigationViews(ctx.svc.db, ctx.user.id)).map(formatNavigationView) };
  },
  apply(state, event) {
    if (event.type !== 'navigation_view') return;
    const views = state.navigation_views;
    if (event.op === 'add') {
      const view = event.navigation_view;
      if (!views.some((v) => v.fragment === view.fragment)) views.push(view);
    } else if (event.op === 'update') {
      const view = views.find((v) => v.fragment === event.fragment);
      if (view) Object.assign(view, event.data);
    } else if (event.op === 'remove') {
      state.navigation_views = views.filter((v) => v.fragment !== event.fragment);
    }
  },
};
