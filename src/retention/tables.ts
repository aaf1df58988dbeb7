import type { Generated } from 'kysely';

/** Why rows were archived (the reference's ArchiveTransaction types). */
export const ARCHIVE_KIND = { RETENTION: 1, MANUAL: 2 } as const;

export interface ArchiveTransactionTable {
  id: Generated<number>;
  realm_id: number;
  kind: number;
  created_at: Generated<Date>;
  restored: Generated<boolean>;
}

export interface ArchivedMessageTable {
  realm_id: number;
  transaction_id: number;
  message_id: number;
  channel_id: number | null;
  data: unknown;
}

export interface ArchivedMessageRowTable {
  realm_id: number;
  transaction_id: number;
  message_id: number;
  table_name: string;
  data: unknown;
}

/** An upload's row, archived when the retention policy deleted the last message linking it. */
export interface ArchivedAttachmentTable {
  realm_id: number;
  transaction_id: number;
  attachment_id: number;
  data: unknown;
}

export interface ArchiveTables {
  archive_transactions: ArchiveTransactionTable;
  archived_messages: ArchivedMessageTable;
  archived_message_rows: ArchivedMessageRowTable;
  archived_attachments: ArchivedAttachmentTable;
}
