// An organization's user list as register sends it, kept between registers
// (events/kept-reads.ts): reading, formatting and serializing every user was most of a
// register's work in a large organization, and the list changes rarely. Every change to
// what it holds emits one of the events of DROPS (a user's fields, role, activity, avatar,
// email or its visibility, profile field values or fields), which drops the organization's list.

import type { Executor } from '../db/schema.ts';
import type { Notice } from '../events/types.ts';
import type { User } from './tables.ts';
import { KeptReads } from '../events/kept-reads.ts';
import { RawJson } from '../http/raw-json.ts';
import { formatUser, type ApiUser, type UserCard } from './format.ts';
import { listUserCards } from './queries.ts';
import { profileDataFor, type ProfileData } from './profile-data.ts';

/** Events after which an organization's list is read afresh. */
const DROPS = new Set<string>(['realm_user', 'realm_bot', 'custom_profile_fields', 'user_settings', 'realm']);

/** No user has this id: entries formatted for it show what any other viewer of the same role sees. */
const NO_ONE = 0;

/** Users' entries as one JSON array of UTF-8 text, and where each user's entry lies in it. */
export class EntryList {
  readonly json: Buffer;
  readonly #at = new Map<number, [number, number]>();

  constructor(entries: readonly [userId: number, json: string][]) {
    let offset = 1;
    for (const [userId, json] of entries) {
      const end = offset + Buffer.byteLength(json);
      this.#at.set(userId, [offset, end]);
      offset = end + 1;
    }
    this.json = Buffer.from(`[${entries.map(([, json]) => json).join(',')}]`);
  }

  /** A user's entry, or undefined if the list has none. */
  entry(userId: number): Buffer | undefined {
    const at = this.#at.get(userId);
    return at && this.json.subarray(at[0], at[1]);
  }

  /** The list with one user's entry replaced (as it is when it has none), without copying it. */
  replacing(userId: number, json: string): RawJson {
    const at = this.#at.get(userId);
    if (!at) return new RawJson([this.json]);
    return new RawJson([this.json.subarray(0, at[0]), Buffer.from(json), this.json.subarray(at[1])]);
  }
}

/** `realm_users` and `realm_non_active_users` as one kind of viewer sees them. */
export interface SerializedLists {
  active: EntryList;
  inactive: EntryList;
}

/** One organization's users as read, and their register entries serialized per kind of viewer. */
export class KeptUserList {
  /** Every user of the organization, system bots included, by id. */
  readonly cards: UserCard[];
  readonly #byId: Map<number, UserCard>;
  readonly #profiles: Map<number, ProfileData>;
  /** Per role and avatar option. */
  readonly #serialized = new Map<string, SerializedLists>();

  constructor(cards: UserCard[], profiles: Map<number, ProfileData>) {
    this.cards = cards;
    this.#profiles = profiles;
    this.#byId = new Map(cards.map((c) => [c.id, c]));
  }

  /** A user's card, or undefined if the user was created after the list was read. */
  card(userId: number): UserCard | undefined {
    return this.#byId.get(userId);
  }

  /** A `realm_users` entry: the User object without `is_active`, with profile data for humans. */
  entry(card: UserCard, viewer: Pick<User, 'id' | 'role'>, clientSvcavatar: boolean): Omit<ApiUser, 'is_active'> {
    const entry: Omit<ApiUser, 'is_active'> = formatUser(card, viewer, { clientSvcavatar, withoutActive: true });
    if (!card.is_bot) entry.profile_data = this.#profiles.get(card.id) ?? {};
    return entry;
  }

  /**
   * Every user but the system bots, as a viewer of `role` other than the user sees them
   * (what formatUser shows depends on the viewer's role and on whether the viewer is the user).
   */
  serializedFor(role: number, clientSvcavatar: boolean): SerializedLists {
    const key = `${role}:${clientSvcavatar}`;
    let lists = this.#serialized.get(key);
    if (!lists) {
      const viewer = { id: NO_ONE, role };
      const entries = (active: boolean): [number, string][] =>
        this.cards.filter((c) => !c.is_system_bot && c.is_active === active).map((c) => [c.id, JSON.stringify(this.entry(c, viewer, clientSvcavatar))]);
      lists = { active: new EntryList(entries(true)), inactive: new EntryList(entries(false)) };
      this.#serialized.set(key, lists);
    }
    return lists;
  }
}

/** Reads an organization's list from the database. */
export async function readUserList(db: Executor, realmId: number): Promise<KeptUserList> {
  const cards = await listUserCards(db, realmId);
  return new KeptUserList(cards, await profileDataFor(db, realmId, cards));
}

export class UserListCache {
  readonly #byRealm: KeptReads<number, KeptUserList>;
  readonly #read: typeof readUserList;

  constructor(ttlMs: number, read: typeof readUserList = readUserList) {
    this.#byRealm = new KeptReads(ttlMs);
    this.#read = read;
  }

  /** The organization's list, remembered or read (outside any transaction: what it reads is committed). */
  get(db: Executor, realmId: number): Promise<KeptUserList> {
    return this.#byRealm.through(realmId, realmId, () => this.#read(db, realmId));
  }

  /** Forgets everything (a notice may have been lost). */
  clear(): void {
    this.#byRealm.drop();
  }

  /** Drops an organization's list after a change that may touch it. */
  observe(notice: Notice): void {
    if (DROPS.has(notice.event.type)) this.#byRealm.dropRealm(notice.realmId);
  }
}
