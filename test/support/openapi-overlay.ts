// What the test support's OpenAPI check (openapi.ts) adds to or corrects in the
// reference document (zulip-openapi-10.2, which is older than the feature level
// Confab announces, 419). Every entry says why, in one line.
//
// `at` names a schema: `response <METHOD> <path> <status>`, `event <type>[/<op>]`
// or `schema <Name>` (components), then optionally `#` and a JSON pointer inside it.

type Schema = Record<string, unknown>;

export type OverlayEntry =
  | {
      /** One place, or several that share the change. */
      at: string | string[];
      reason: string;
      /** Properties added to the object schema there (or replacing ones of the same name). */
      properties?: Record<string, Schema>;
      /** Properties that are no longer required there. */
      optional?: string[];
      /** Values added to the enum there. */
      enum?: unknown[];
      /** Keywords set on the schema there (e.g. `{ nullable: true }`; undefined removes one). */
      merge?: Schema;
    }
  /** An event the document does not have (`type` or `type/op`), or replaces (`replaces: true`). */
  | { event: string; schema: Schema; reason: string; replaces?: boolean }
  /** A response of an endpoint the document does not have. */
  | { response: string; schema: Schema; reason: string };

const group = { $ref: '#/components/schemas/GroupSettingValue' };
const int = { type: 'integer' };
const str = { type: 'string' };
const bool = { type: 'boolean' };
const listed = {};
const REGISTER = 'response POST /register 200#/allOf/1';

/** Channel fields of Zulip 11 (digest 1.2 and 1.19), with their types. */
const CHANNEL_FIELDS = {
  can_delete_any_message_group: group,
  can_delete_own_message_group: group,
  can_move_messages_out_of_channel_group: group,
  can_move_messages_within_channel_group: group,
  can_resolve_topics_group: group,
  folder_id: { type: 'integer', nullable: true },
  subscriber_count: int,
  topics_policy: { type: 'string', enum: ['inherit', 'allow_empty_topic', 'disable_empty_topic', 'empty_topic_only'] },
};
/** The same names, for the lists of allowed keys that strict schemas repeat (`{}` each). */
const CHANNEL_KEYS = Object.fromEntries(Object.keys(CHANNEL_FIELDS).map((k) => [k, listed]));

const CHANNEL_FOLDER = {
  type: 'object',
  additionalProperties: false,
  properties: {
    id: int,
    name: str,
    description: str,
    rendered_description: str,
    order: int,
    date_created: int,
    creator_id: { type: 'integer', nullable: true },
    is_archived: bool,
  },
};

/** A reminder (FL 399): a scheduled direct message to oneself about another message. */
const REMINDER = {
  type: 'object',
  additionalProperties: false,
  required: ['reminder_id', 'type', 'to', 'content', 'rendered_content', 'scheduled_delivery_timestamp', 'failed', 'reminder_target_message_id'],
  properties: {
    reminder_id: int,
    type: { enum: ['private'] },
    to: { type: 'array', items: int },
    content: str,
    rendered_content: str,
    scheduled_delivery_timestamp: int,
    failed: bool,
    reminder_target_message_id: int,
  },
};

const NAVIGATION_VIEW = {
  type: 'object',
  additionalProperties: false,
  properties: { fragment: str, is_pinned: bool, name: { type: 'string', nullable: true } },
};

export const OVERLAY: readonly OverlayEntry[] = [
  // --- newer than the document (Zulip 11, up to feature level 419) ---
  {
    at: ['schema BasicChannelBase', 'schema Subscription'],
    properties: CHANNEL_FIELDS,
    reason: 'channel settings of FL 389-407 (folder_id, topics_policy, subscriber_count, can_delete_*/can_move_*/can_resolve_topics_group)',
  },
  {
    at: [
      'schema BasicChannel#/allOf/1',
      `${REGISTER}/properties/never_subscribed/items/allOf/1`,
      'response GET /streams 200#/allOf/1/properties/streams/items/allOf/1',
    ],
    properties: CHANNEL_KEYS,
    reason: 'the same channel settings, in the lists of allowed keys',
  },
  {
    at: 'response POST /users/me/subscriptions 200#/allOf/1',
    properties: { new_subscription_messages_sent: bool },
    reason: 'new_subscription_messages_sent is FL 397 (digest 1.2)',
  },
  {
    at: REGISTER,
    properties: {
      max_channel_folder_name_length: int,
      max_channel_folder_description_length: int,
      max_reminder_note_length: int,
      max_bulk_new_subscription_messages: int,
      realm_can_set_delete_message_policy_group: group,
      realm_can_set_topics_policy_group: group,
      realm_topics_policy: { type: 'string', enum: ['allow_empty_topic', 'disable_empty_topic'] },
      channel_folders: { type: 'array', items: CHANNEL_FOLDER },
      navigation_views: { type: 'array', items: NAVIGATION_VIEW },
      push_devices: {
        type: 'object',
        additionalProperties: {
          type: 'object',
          additionalProperties: false,
          properties: { status: { type: 'string', enum: ['active', 'pending', 'failed'] }, error_code: { type: 'string', nullable: true } },
        },
      },
      reminders: { type: 'array', items: REMINDER },
    },
    reason: 'register keys of FL 389-417: channel folders, navigation views, push devices, reminders and their bounds (digest section 4)',
  },
  {
    at: 'event realm/update_dict#/properties/data',
    properties: { topics_policy: str, can_set_delete_message_policy_group: group, can_set_topics_policy_group: group },
    reason: 'organization settings of FL 392-407 (topics_policy and who may change the channel policies)',
  },
  {
    at: 'event stream/update#/properties/value',
    merge: { nullable: true },
    reason: 'a channel leaving its folder is folder_id null (FL 389, digest 3.3)',
  },
  {
    event: 'channel_folder/add',
    schema: {
      type: 'object',
      additionalProperties: false,
      properties: { id: int, type: { enum: ['channel_folder'] }, op: str, channel_folder: CHANNEL_FOLDER },
    },
    reason: 'channel folders are FL 389 (digest 3.3)',
  },
  {
    event: 'channel_folder/update',
    schema: {
      type: 'object',
      additionalProperties: false,
      properties: {
        id: int,
        type: { enum: ['channel_folder'] },
        op: str,
        channel_folder_id: int,
        data: { type: 'object', additionalProperties: false, properties: { name: str, description: str, rendered_description: str, is_archived: bool } },
      },
    },
    reason: 'channel folders are FL 389 (digest 3.3)',
  },
  {
    event: 'channel_folder/reorder',
    schema: {
      type: 'object',
      additionalProperties: false,
      properties: { id: int, type: { enum: ['channel_folder'] }, op: str, order: { type: 'array', items: int } },
    },
    reason: 'reordering channel folders is FL 418 (digest 3.3)',
  },
  {
    event: 'navigation_view/add',
    schema: {
      type: 'object',
      additionalProperties: false,
      properties: { id: int, type: { enum: ['navigation_view'] }, op: str, navigation_view: NAVIGATION_VIEW },
    },
    reason: 'navigation views are FL 390 (digest 3.3)',
  },
  {
    event: 'navigation_view/update',
    schema: {
      type: 'object',
      additionalProperties: false,
      properties: {
        id: int,
        type: { enum: ['navigation_view'] },
        op: str,
        fragment: str,
        data: { type: 'object', additionalProperties: false, properties: { is_pinned: bool, name: { type: 'string', nullable: true } } },
      },
    },
    reason: 'navigation views are FL 390 (digest 3.3)',
  },
  {
    event: 'navigation_view/remove',
    schema: { type: 'object', additionalProperties: false, properties: { id: int, type: { enum: ['navigation_view'] }, op: str, fragment: str } },
    reason: 'navigation views are FL 390 (digest 3.3)',
  },
  {
    event: 'push_device',
    schema: {
      type: 'object',
      additionalProperties: false,
      properties: {
        id: int,
        type: { enum: ['push_device'] },
        push_account_id: str,
        status: { type: 'string', enum: ['active', 'pending', 'failed'] },
        error_code: { type: 'string', nullable: true },
      },
    },
    reason: 'push device registration is FL 406 (digest 3.3)',
  },
  {
    event: 'reminders/add',
    schema: {
      type: 'object',
      additionalProperties: false,
      properties: { id: int, type: { enum: ['reminders'] }, op: str, reminders: { type: 'array', items: REMINDER } },
    },
    reason: 'reminders are FL 399 (digest 3.3)',
  },
  {
    event: 'reminders/remove',
    schema: { type: 'object', additionalProperties: false, properties: { id: int, type: { enum: ['reminders'] }, op: str, reminder_id: int } },
    reason: 'reminders are FL 399 (digest 3.3)',
  },
  // Before the modern form is added: `event presence` names the document's legacy one only until then.
  {
    at: 'event presence',
    optional: ['email'],
    reason: 'the document is wrong about the reference: with slim_presence the legacy event has no email (digest 3.3)',
  },
  {
    event: 'presence',
    schema: {
      type: 'object',
      additionalProperties: false,
      properties: {
        id: int,
        type: { enum: ['presence'] },
        presences: { type: 'object', additionalProperties: { $ref: '#/components/schemas/ModernPresenceFormat' } },
      },
    },
    reason: 'the simplified_presence_events form is FL 419 (digest 3.3)',
  },
  {
    at: 'schema Subscription',
    properties: { partial_subscribers: { type: 'array', items: int } },
    reason: 'include_subscribers=partial is newer than the document (digest 1.19, section 6)',
  },

  // --- where Confab differs from the reference on purpose ---
  {
    at: 'response GET /server_settings 200#/allOf/1',
    properties: { max_file_upload_size_mib: int },
    reason: 'Confab also announces the upload bound here (docs/DECISIONS.md, Files)',
  },
  {
    at: 'response GET /users/{user_id_or_email}/presence 200#/allOf/1/properties/presence',
    merge: {
      additionalProperties: undefined,
      anyOf: [
        { additionalProperties: { type: 'object', additionalProperties: false, properties: { timestamp: int, status: str } } },
        { $ref: '#/components/schemas/ModernPresenceFormat' },
      ],
    },
    reason: 'Confab takes slim_presence here too and answers in the modern format (test/http/presence.test.ts)',
  },
  {
    at: 'event realm_user/update#/properties/person/oneOf/1/properties/avatar_url',
    merge: { nullable: true },
    reason: 'the avatar facet is null for client_svcavatar clients that can compute it (events/shape.ts); the reference sends the URL',
  },

  // --- where the document is wrong about the reference ---
  // (openapi.ts requires every key an event lists: these are the ones the document says are conditional)
  {
    at: 'event stream/update',
    optional: ['rendered_description', 'history_public_to_subscribers', 'is_web_public'],
    reason: 'companions of some properties only: the description, or the privacy settings (as the reference sends them)',
  },
  {
    at: ['event user_settings/update', 'event update_display_settings'],
    optional: ['language_name'],
    reason: 'language_name comes with a default_language change only',
  },
  {
    at: 'event update_message_flags/remove',
    optional: ['message_details'],
    reason: 'only when the flag is "read" (the document says so in the key\'s description)',
  },
  {
    at: ['event typing/start', 'event typing/stop'],
    optional: ['recipients', 'stream_id', 'topic'],
    reason: 'recipients for direct messages only, stream_id and topic for channel messages only',
  },
  {
    at: 'event user_status',
    optional: ['away', 'status_text', 'emoji_name', 'emoji_code', 'reaction_type'],
    reason: 'only what changed: the reference sends the fields the update set (digest 3.3)',
  },
  {
    at: 'event delete_message',
    optional: ['message_id', 'message_ids', 'stream_id', 'topic'],
    reason: 'message_ids with bulk_message_deletion, else message_id; stream_id and topic for channel messages only',
  },
  {
    at: 'schema User#/allOf/1',
    properties: { is_system_bot: bool },
    reason: "the reference's user objects of system bots say so (is_system_bot), as register's cross_realm_bots do",
  },
  {
    at: 'response GET /users/me 200#/allOf/1',
    properties: { bot_type: int, bot_owner_id: { type: 'integer', nullable: true } },
    reason: "a bot's own profile has its bot fields, as every user object of a bot does (humans: test/http/users.test.ts)",
  },
  {
    at: 'event message',
    properties: { local_message_id: str },
    reason: "the sending client's own queue gets local_message_id (digest 1.1); the document leaves it out",
  },
];
