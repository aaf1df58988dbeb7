import { z } from 'zod';
import type { Router } from '../http/router.ts';
import { p, type Param } from '../http/params.ts';
import { badRequest } from '../http/errors.ts';
import { USER_SETTINGS, USER_SETTING_NAMES, type UserSettingName, type UserSettingSpec, type UserSettings } from './settings.ts';
import { updateSettings } from './settings-actions.ts';

/** A setting's parameter, from its entry in the settings table. */
function settingParam(name: UserSettingName): Param<any, true> {
  const spec: UserSettingSpec = USER_SETTINGS[name];
  const base: Param<any> =
    spec.kind === 'bool'
      ? p.bool()
      : spec.kind === 'int'
        ? p.int(
            z
              .int()
              .min(spec.min ?? -(2 ** 31))
              .max(spec.max ?? 2 ** 31 - 1),
          )
        : p.str();
  return base
    .map((value, given) => {
      if (spec.values && !spec.values.includes(value)) throw badRequest(`Invalid ${given}`);
      spec.check?.(value);
      return value;
    })
    .optional();
}

const SETTINGS_PARAMS = {
  full_name: p.str().optional(),
  email: p.str().optional(),
  old_password: p.str().optional(),
  new_password: p.str().optional(),
  ...(Object.fromEntries(USER_SETTING_NAMES.map((n) => [n, settingParam(n)])) as Record<UserSettingName, Param<any, true>>),
};

export function settingsRoutes(r: Router): void {
  // The display and notification paths are the older names of the same endpoint.
  for (const path of ['/settings', '/settings/display', '/settings/notifications']) {
    r.route('PATCH', path, SETTINGS_PARAMS, async (ctx, q) => {
      const { full_name, email, old_password, new_password, ...rest } = q;
      const settings = Object.fromEntries(Object.entries(rest).filter(([, v]) => v !== undefined)) as Partial<UserSettings>;
      await updateSettings(ctx.svc, ctx.realm, ctx.user, { full_name, email, old_password, new_password, settings });
      return {};
    });
  }
}
