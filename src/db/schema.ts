// The database as Kysely sees it: each domain declares its own tables.
import type { Kysely, Transaction } from 'kysely';
import type { RealmTables } from '../realm/tables.ts';
import type { UserTables } from '../users/tables.ts';
import type { UserGroupTables } from '../user_groups/tables.ts';

export interface Database extends RealmTables, UserTables, UserGroupTables {}

export type Db = Kysely<Database>;
/** Either the database or an open transaction: what query functions take. */
export type Executor = Kysely<Database> | Transaction<Database>;
