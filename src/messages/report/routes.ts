import { z } from 'zod';
import type { Router } from '../../http/router.ts';
import { p } from '../../http/params.ts';
import { MAX_REPORT_DESCRIPTION_LENGTH, REPORT_REASONS, reportMessage, type ReportType } from './report.ts';

export function reportRoutes(r: Router): void {
  r.route(
    'POST',
    '/messages/{message_id}/report',
    {
      report_type: p.choice(Object.keys(REPORT_REASONS) as ReportType[]),
      description: p.str(z.string().max(MAX_REPORT_DESCRIPTION_LENGTH)).default(''),
    },
    async (ctx, q) => {
      await reportMessage(ctx.svc, ctx.realm, ctx.user, q);
      return {};
    },
  );
}
