import { z } from 'zod';
import type { Router } from '../http/router.ts';
import { p } from '../http/params.ts';
import { badRequest } from '../http/errors.ts';
import { versionFields } from '../version.ts';
import { realmIconUrl, realmUrl, settingsOf } from './queries.ts';
import { renderHtml } from '../rendering/index.ts';
import { MAX_REALM_NAME_LENGTH } from './actions.ts';
import { MAX_REALM_DESCRIPTION_LENGTH } from './settings.ts';
import { GROUP_SETTING_PARAMS, SETTING_PARAMS } from './settings-validation.ts';
import { updateRealmSettings } from './settings-actions.ts';

export function realmRoutes(r: Router): void {
  // GET /server_settings (digest 1.25): what a client needs before it logs in.
  r.publicRoute('GET', '/server_settings', 'none', {}, async (ctx) => {
    const { svc, realm } = ctx;
    const server = {
      authentication_methods: {
        password: true,
        dev: false,
        email: true,
        ldap: false,
        remoteuser: false,
        github: false,
        azuread: false,
        gitlab: false,
        apple: false,
        google: false,
        saml: false,
        'openid connect': false,
      },
      ...versionFields(svc.config.compatNames),
      push_notifications_enabled: svc.config.pushServiceUrl !== undefined,
      is_incompatible: ctx.request.clientName === 'ZulipInvalid',
    };
    if (!realm) {
      if (ctx.subdomain !== '') throw badRequest('Invalid subdomain');
      return server;
    }
    const settings = settingsOf(realm);
    const url = realmUrl(realm, svc.config);
    return {
      ...server,
      email_auth_enabled: settings.password_auth_enabled,
      require_email_format_usernames: true,
      realm_url: url,
      realm_uri: url,
      realm_name: realm.name,
      realm_icon: realmIconUrl(realm),
      max_file_upload_size_mib: svc.config.maxFileUploadMib,
      realm_description: await renderHtml(svc, realm, realm.description),
      realm_web_public_access_enabled: settings.enable_spectator_access,
      external_authentication_methods: [],
    };
  });

  // PATCH /realm (the reference's update_realm): organization settings, for administrators.
  r.route(
    'PATCH',
    '/realm',
    {
      name: p
        .str(
          z
            .string()
            .max(MAX_REALM_NAME_LENGTH)
            .refine((s) => s.trim() !== '', '{name} cannot be blank'),
        )
        .optional(),
      description: p.str(z.string().max(MAX_REALM_DESCRIPTION_LENGTH)).optional(),
      ...SETTING_PARAMS,
      ...GROUP_SETTING_PARAMS,
    },
    async (ctx, q) => {
      const { name, description, ...rest } = q as Record<string, any>;
      const pick = (keys: string[]) => Object.fromEntries(keys.filter((k) => rest[k] !== undefined).map((k) => [k, rest[k]]));
      return updateRealmSettings(ctx.svc, ctx.realm, ctx.user, {
        name,
        description,
        settings: pick(Object.keys(SETTING_PARAMS)),
        groups: pick(Object.keys(GROUP_SETTING_PARAMS)),
      });
    },
  );
}
