import type { Generated } from 'kysely';
import type { Timestamp } from '../realm/tables.ts';

export interface UserGroupTable {
  id: Generated<number>;
  realm_id: number;
  /** Null for an anonymous group: the stored form of a {direct_members, direct_subgroups} setting value. */
  name: string | null;
  description: Generated<string>;
  is_system_group: Generated<boolean>;
  creator_id: number | null;
  date_created: Timestamp | null;
  deactivated: Generated<boolean>;
  can_add_members_group_id: number | null;
  can_join_group_id: number | null;
  can_leave_group_id: number | null;
  can_manage_group_id: number | null;
  can_mention_group_id: number | null;
  can_remove_members_group_id: number | null;
}

export interface UserGroupMemberTable {
  realm_id: number;
  group_id: number;
  user_id: number;
}

export interface UserGroupSubgroupTable {
  realm_id: number;
  supergroup_id: number;
  subgroup_id: number;
}

export interface UserGroupTables {
  user_groups: UserGroupTable;
  user_group_members: UserGroupMemberTable;
  user_group_subgroups: UserGroupSubgroupTable;
}
