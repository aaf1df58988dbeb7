// Changing messages: PATCH and DELETE /messages/{message_id} and the edit
// history (digest section 2 "Edit / move message", "Delete message", 1.14).

import { z } from 'zod';
import type { Router } from '../../http/router.ts';
import { p } from '../../http/params.ts';
import { editMessage } from './edit.ts';
import { PROPAGATE_MODES } from './request.ts';
import { deleteMessage } from '../delete.ts';
import { messageHistory } from '../history/history.ts';

export function messageEditRoutes(r: Router): void {
  r.route(
    'PATCH',
    '/messages/{message_id}',
    {
      content: p.str().optional(),
      topic: p.str().optional().alias('subject'),
      stream_id: p.int(z.int().min(0)).optional(),
      propagate_mode: p.choice(PROPAGATE_MODES).default('change_one'),
      send_notification_to_old_thread: p.bool().default(false),
      send_notification_to_new_thread: p.bool().default(true),
      prev_content_sha256: p.str().optional(),
    },
    async (ctx, q) => editMessage(ctx.svc, ctx.realm, ctx.user, q.message_id, q),
  );

  r.route('DELETE', '/messages/{message_id}', {}, async (ctx, q) => {
    await deleteMessage(ctx.svc, ctx.realm, ctx.user, q.message_id);
    return {};
  });

  r.route('GET', '/messages/{message_id}/history', { allow_empty_topic_name: p.bool().default(false) }, async (ctx, q) =>
    messageHistory(ctx.svc.db, ctx.realm, ctx.user, q.message_id, { allowEmptyTopicName: q.allow_empty_topic_name }),
  );
}
