import type { UserStatusRow } from './tables.ts';

/** The UserStatus object: only what is set; `away` is the legacy face of presence_enabled = false. */
export interface ApiUserStatus {
  away?: true;
  status_text?: string;
  emoji_name?: string;
  emoji_code?: string;
  reaction_type?: string;
}

export function formatStatus(row: UserStatusRow, presenceEnabled: boolean): ApiUserStatus {
  const status: ApiUserStatus = {};
  if (!presenceEnabled) status.away = true;
  if (row.status_text) status.status_text = row.status_text;
  if (row.emoji_name) {
    status.emoji_name = row.emoji_name;
    status.emoji_code = row.emoji_code;
    status.reaction_type = row.reaction_type;
  }
  return status;
}
