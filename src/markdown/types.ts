// The renderer's data types. All are plain JSON-serializable objects, so a
// context can be built by the caller, sent to a worker thread and cached.

export interface MentionableUser {
  id: number;
  full_name: string;
  /** Deactivated users still render, but are never notified. Default true. */
  is_active?: boolean;
}

export interface MentionableGroup {
  id: number;
  name: string;
  /** Deactivated groups render as silent mentions. Default false. */
  deactivated?: boolean;
}

export interface LinkableChannel {
  id: number;
  name: string;
}

/** Latest message of a topic, for `#**channel>topic**` links (`/with/<id>`). */
export interface TopicLatestMessage {
  channel_id: number;
  topic: string;
  latest_message_id: number;
}

export interface Linkifier {
  id: number;
  /** RE2 syntax; Python-style named groups `(?P<name>...)`. */
  pattern: string;
  /** RFC 6570 URL template using the pattern's named groups. */
  url_template: string;
}

export interface CustomEmoji {
  id: number | string;
  name: string;
  source_url: string;
  deactivated?: boolean;
}

/** An uploaded image: its size, and its thumbnail once made (else a loading placeholder shows). */
export interface UploadedImage {
  original_width_px: number;
  original_height_px: number;
  /** `/user_uploads/thumbnail/<path_id>/<format>`. */
  thumbnail_url?: string;
  content_type?: string;
  animated?: boolean;
}

/**
 * A link's preview as the reference's url_preview finds it: Open Graph / page
 * metadata, or oEmbed (`type` photo or video, `html` the player for videos).
 */
export interface UrlEmbedData {
  type?: 'photo' | 'video' | null;
  html?: string | null;
  title?: string | null;
  description?: string | null;
  image?: string | null;
}

/** Everything rendering needs from the organization; build it from collectReferences(). */
export interface RenderContext {
  users?: MentionableUser[];
  groups?: MentionableGroup[];
  channels?: LinkableChannel[];
  topics?: TopicLatestMessage[];
  linkifiers?: Linkifier[];
  custom_emoji?: CustomEmoji[];
  /** e.g. `https://chat.example.com`; links into it become relative. */
  server_url?: string;
  /** The sender's setting: `:)` becomes `:smile:`. */
  translate_emoticons?: boolean;
  /** Inline previews of image/video/YouTube links. Default true. */
  image_previews?: boolean;
  /** Camo-style proxy for external images: src = base_url + hmac_sha1(key, url) + '/' + hex(url). */
  image_proxy?: { base_url: string; key: string } | null;
  /** Uploaded images known to the server, keyed by path id (after `/user_uploads/`). */
  uploaded_images?: Record<string, UploadedImage>;
  /** Link previews (Open Graph, oEmbed) from url_embed_data; links without data are listed in links_for_preview. Default false. */
  url_embed_previews?: boolean;
  /** What a background fetch found for each link: null when the link cannot be previewed. */
  url_embed_data?: Record<string, UrlEmbedData | null>;
  /** Bots' messages get no link previews, as the reference's. */
  sent_by_bot?: boolean;
  /** Syntax highlighting of code blocks. Default true. */
  highlight_code?: boolean;
  /** Shown for links to the empty topic. Default "general chat". */
  empty_topic_display_name?: string;
}

/** Names and ids a message refers to, found without rendering (see collectReferences). */
export interface References {
  /** Full names from `@**Name**` / `@_**Name**` (not the `|id` forms). */
  user_names: string[];
  /** Ids from `@**Name|12**` / `@**|12**`. */
  user_ids: number[];
  group_names: string[];
  channel_names: string[];
  /** Channel name + topic pairs from `#**channel>topic**` links. */
  topics: { channel_name: string; topic: string }[];
  /**
   * Every name between two colons (`:name:`, overlapping ones too, as in `:a:b:`): a custom
   * emoji can only render where its name is one of these.
   */
  emoji_names: string[];
  /** Path ids of `/user_uploads/...` references. */
  upload_path_ids: string[];
}

export interface MentionResult {
  /** Users to notify (non-silent mentions of active users). */
  user_ids: number[];
  /** Users mentioned silently (rendered, not notified). */
  silent_user_ids: number[];
  /** Groups to notify. */
  group_ids: number[];
  /** `@**all**`, `@**everyone**`, `@**channel**`, `@**stream**`. */
  stream_wildcard: boolean;
  /** `@**topic**`. */
  topic_wildcard: boolean;
}

export interface RenderResult {
  html: string;
  mentions: MentionResult;
  /** Content starts with `/me `. */
  is_me_message: boolean;
  has_link: boolean;
  has_image: boolean;
  /** Links to `/user_uploads/`; the caller may confirm against its attachments. */
  has_attachment: boolean;
  /** Path ids of linked uploads (for claiming attachments). */
  attachment_path_ids: string[];
  /** Links whose preview needs fetching (url_embed_previews on, no url_embed_data yet). */
  links_for_preview: string[];
}
