// Every domain's part of register's initial state, in one list.
import type { StateSection } from './state.ts';
import { realmSection } from '../realm/state.ts';
import { usersSection } from '../users/state.ts';

export const STATE_SECTIONS: readonly StateSection[] = [realmSection, usersSection];
