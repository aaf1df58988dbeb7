import type { Generated, Selectable } from 'kysely';
import type { Timestamp } from '../realm/tables.ts';

/** A file uploaded with POST /user_uploads (the reference's Attachment, with its ImageAttachment facts). */
export interface AttachmentTable {
  id: Generated<number>;
  realm_id: number;
  owner_id: number;
  /** `<realm_id>/<xx>/<random>/<sanitized name>`: the URL is `/user_uploads/<path_id>`. */
  path_id: string;
  /** The name as uploaded. */
  file_name: string;
  size: number;
  content_type: string;
  create_time: Timestamp;
  /** Images only (null otherwise): size as displayed, frames, and whether thumbnails were made. */
  original_width_px: number | null;
  original_height_px: number | null;
  frames: number | null;
  thumbnailed: Generated<boolean>;
}

/** Which messages link an attachment (claimed on send and edit; a deleted message's rows go with it). */
export interface AttachmentMessageTable {
  realm_id: number;
  attachment_id: number;
  message_id: number;
}

export interface UploadTables {
  attachments: AttachmentTable;
  attachment_messages: AttachmentMessageTable;
}

export type Attachment = Selectable<AttachmentTable>;
