// The database as Kysely sees it: each domain declares its own tables.
import type { Kysely, Transaction } from 'kysely';
import type { RealmTables } from '../realm/tables.ts';
import type { UserTables } from '../users/tables.ts';
import type { UserGroupTables } from '../user_groups/tables.ts';
import type { ChannelTables } from '../channels/tables.ts';
import type { MessageTables } from '../messages/tables.ts';
import type { CustomProfileFieldTables } from '../custom_profile_fields/tables.ts';
import type { SavedSnippetTables } from '../saved_snippets/tables.ts';
import type { LinkifierTables } from '../linkifiers/tables.ts';
import type { RealmEmojiTables } from '../custom_emoji/tables.ts';
import type { PresenceTables } from '../presence/tables.ts';
import type { NavigationViewTables } from '../navigation_views/tables.ts';
import type { DraftTables } from '../drafts/tables.ts';
import type { PushTables } from '../push/tables.ts';
import type { InvitationTables } from '../invitations/tables.ts';
import type { ScheduledMessageTables } from '../scheduled_messages/tables.ts';
import type { UserStatusTables } from '../user_status/tables.ts';
import type { MutedUserTables } from '../muted_users/tables.ts';
import type { AlertWordTables } from '../alert_words/tables.ts';
import type { UploadTables } from '../uploads/tables.ts';
import type { RealmPlaygroundTables } from '../realm_playgrounds/tables.ts';
import type { BotTables } from '../bots/tables.ts';
import type { JobTables } from '../jobs/tables.ts';
import type { PreviewTables } from '../previews/tables.ts';
import type { AuthTables } from '../auth/tables.ts';
import type { OnboardingTables } from '../onboarding/tables.ts';
import type { EmailTables } from '../email/tables.ts';

export interface Database
  extends RealmTables,
    UserTables,
    UserGroupTables,
    ChannelTables,
    MessageTables,
    CustomProfileFieldTables,
    SavedSnippetTables,
    LinkifierTables,
    RealmEmojiTables,
    PresenceTables,
    NavigationViewTables,
    DraftTables,
    PushTables,
    InvitationTables,
    ScheduledMessageTables,
    UserStatusTables,
    MutedUserTables,
    AlertWordTables,
    UploadTables,
    RealmPlaygroundTables,
    BotTables,
    JobTables,
    PreviewTables,
    AuthTables,
    OnboardingTables,
    EmailTables {}

export type Db = Kysely<Database>;
/** Either the database or an open transaction: what query functions take. */
export type Executor = Kysely<Database> | Transaction<Database>;
