// A small organization export in the reference's layout (realm.json and
// messages-00000N.json), written by hand for the import tests: the realm, its
// users and channels with their recipients, and who subscribes to what.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** A hand-made export's recipient ids: a user's is 90 + the user's id, a channel's 100 + the channel's. */
export const userRecipient = (userId: number) => 90 + userId;
export const channelRecipient = (channelId: number) => 100 + channelId;

export interface HandMadeExport {
  realm: { id: number; name: string; string_id: string };
  users: { id: number; email: string; delivery_email?: string; full_name: string; role: number; is_active: boolean }[];
  channels: { id: number; name: string; description?: string; invite_only?: boolean }[];
  /** [user id, channel id, active]. */
  subscriptions: [number, number, boolean][];
  /** Further realm.json tables (zerver_realmemoji, zerver_reaction, ...). */
  tables?: Record<string, unknown[]>;
  /** One messages file each; by default a single empty one. */
  messageFiles?: { zerver_message: unknown[]; zerver_usermessage: unknown[] }[];
}

export function writeHandMadeExport(dir: string, e: HandMadeExport): void {
  const realm = {
    zerver_realm: [e.realm],
    zerver_userprofile: e.users.map((u) => ({ ...u, recipient: userRecipient(u.id) })),
    zerver_stream: e.channels.map((c) => ({ description: '', invite_only: false, ...c, recipient: channelRecipient(c.id) })),
    zerver_recipient: [
      ...e.users.map((u) => ({ id: userRecipient(u.id), type: 1, type_id: u.id })),
      ...e.channels.map((c) => ({ id: channelRecipient(c.id), type: 2, type_id: c.id })),
    ],
    zerver_subscription: e.subscriptions.map(([user, channel, active], i) => ({
      id: i + 1,
      user_profile: user,
      recipient: channelRecipient(channel),
      active,
      color: '#76ce90',
    })),
    ...e.tables,
  };
  writeFileSync(join(dir, 'realm.json'), JSON.stringify(realm));
  const files = e.messageFiles ?? [{ zerver_message: [], zerver_usermessage: [] }];
  for (const [i, f] of files.entries()) writeFileSync(join(dir, `messages-${String(i + 1).padStart(6, '0')}.json`), JSON.stringify(f));
}
