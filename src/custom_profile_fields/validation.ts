// The rules for field definitions and for the values users give them, with
// Zulip's messages (digest 1.11 and section 2).

import { z } from 'zod';
import type { Executor } from '../db/schema.ts';
import type { CustomProfileField } from './tables.ts';
import { badRequest } from '../http/errors.ts';
import { DEFAULT_EXTERNAL_ACCOUNTS, FIELD_TYPE, isFieldType, LIMITS } from './field-types.ts';

/** `field_data` as a parameter: option key -> {text, order} for choices, {subtype, url_pattern?} for accounts. */
export const FIELD_DATA = z.record(z.string(), z.union([z.record(z.string(), z.string()), z.string()]));
export type FieldData = z.infer<typeof FIELD_DATA>;

/** `[{id, value}]` of PATCH /users/{id} and /users/me/profile_data; null, '' and [] remove a value. */
export const PROFILE_DATA = z.array(z.object({ id: z.int(), value: z.union([z.string(), z.array(z.int()), z.null()]) }));
export type ProfileDataEntry = z.infer<typeof PROFILE_DATA>[number];

/** The stored `field_data` text as an object ('' for types that have none). */
export function parseFieldData(text: string): FieldData {
  return text === '' ? {} : (JSON.parse(text) as FieldData);
}

function requiredString(name: string, value: unknown): string {
  if (typeof value !== 'string') throw badRequest(`${name} is not a string`);
  if (value.trim() === '') throw badRequest(`${name} cannot be blank.`);
  return value;
}

/** Zulip's check_dict_only: required and optional keys, nothing else. */
function checkKeys(name: string, value: unknown, required: string[], optional: string[]): Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw badRequest(`${name} is not a dict`);
  const dict = value as Record<string, unknown>;
  for (const key of required) if (!(key in dict)) throw badRequest(`${key} key is missing from ${name}`);
  const unexpected = Object.keys(dict).filter((k) => !required.includes(k) && !optional.includes(k));
  if (unexpected.length > 0) throw badRequest(`Unexpected arguments: ${unexpected.join(', ')}`);
  return dict;
}

function checkChoices(data: FieldData): void {
  if (Object.keys(data).length < 1) throw badRequest('Field must have at least one choice.');
  const texts = new Set<string>();
  for (const [key, option] of Object.entries(data)) {
    if (key.trim() === '') throw badRequest("'value' cannot be blank.");
    const dict = checkKeys('field_data', option, ['text', 'order'], []);
    texts.add(requiredString('field_data["text"]', dict.text));
    requiredString('field_data["order"]', dict.order);
  }
  if (texts.size !== Object.keys(data).length) throw badRequest('Field must not have duplicate choices.');
}

const USERNAME = '%(username)s';

function checkExternalAccount(data: FieldData): void {
  const dict = checkKeys('field_data', data, ['subtype'], ['url_pattern']);
  const subtype = requiredString('field_data["subtype"]', dict.subtype);
  if ('url_pattern' in dict) {
    const pattern = dict.url_pattern;
    if (typeof pattern !== 'string') throw badRequest('field_data["url_pattern"] is not a string');
    if (pattern.split(USERNAME).length !== 2) throw badRequest("URL pattern must contain '%(username)s'.");
    if (!isUrl(pattern.replace(USERNAME, 'username'))) throw badRequest('field_data["url_pattern"] is not a URL');
  }
  if (subtype in DEFAULT_EXTERNAL_ACCOUNTS) return;
  if (subtype !== 'custom') throw badRequest('Invalid external account type');
  if (!('url_pattern' in dict)) throw badRequest('Custom external account must define URL pattern');
}

/** An external account field of a built-in subtype: its label and hint come from the server. */
export function isDefaultExternalAccount(type: number, data: FieldData): boolean {
  return type === FIELD_TYPE.EXTERNAL_ACCOUNT && data.subtype !== 'custom';
}

export interface FieldDefinition {
  name: string;
  hint: string;
  type: number;
  data: FieldData;
  displayInProfileSummary: boolean;
}

/** A whole definition, checked in Zulip's order (data, label and hint, type, summary). */
export function checkFieldDefinition(d: FieldDefinition): void {
  if (d.type === FIELD_TYPE.SELECT) checkChoices(d.data);
  else if (d.type === FIELD_TYPE.EXTERNAL_ACCOUNT) checkExternalAccount(d.data);
  if (!isDefaultExternalAccount(d.type, d.data)) {
    if (d.name.trim() === '') throw badRequest('Label cannot be blank.');
    if (d.hint.length > LIMITS.hint) throw badRequest(`hint is too long (limit: ${LIMITS.hint} characters)`);
    if (d.name.length > LIMITS.name) throw badRequest(`name is too long (limit: ${LIMITS.name} characters)`);
  }
  if (!isFieldType(d.type)) throw badRequest('Invalid field type.');
  // Long text does not fit a summary; the person picker needs client support there.
  if (d.displayInProfileSummary && (d.type === FIELD_TYPE.LONG_TEXT || d.type === FIELD_TYPE.USER)) {
    throw badRequest('Field type not supported for display in profile summary.');
  }
}

/** Whether a value given for a field means "no value" (as null does). */
export function isEmptyValue(value: string | number[]): boolean {
  return typeof value === 'string' ? value.trim() === '' : value.length === 0;
}

function cappedString(name: string, value: unknown, limit: number): string {
  if (typeof value !== 'string') throw badRequest(`${name} is not a string`);
  if (value.length > limit) throw badRequest(`${name} is too long (limit: ${limit} characters)`);
  return value;
}

function isDate(value: string): boolean {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(value);
  if (!m) return false;
  const [year, month, day] = [Number(m[1]), Number(m[2]), Number(m[3])];
  const d = new Date(Date.UTC(year, month - 1, day));
  return year >= 1 && d.getUTCFullYear() === year && d.getUTCMonth() === month - 1 && d.getUTCDate() === day;
}

const URL_SCHEMES = new Set(['http:', 'https:', 'ftp:', 'ftps:']);
const DOMAIN = /^(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+(?:[a-z]{2,63}|xn--[a-z0-9-]{1,59})\.?$/i;
const IPV4 = /^(?:25[0-5]|2[0-4]\d|1?\d?\d)(?:\.(?:25[0-5]|2[0-4]\d|1?\d?\d)){3}$/;

/** An absolute http(s) or ftp(s) URL with a real host name, as Django's URLValidator accepts. */
export function isUrl(value: string): boolean {
  if (/\s/.test(value) || !/^[a-z][a-z0-9+.-]*:\/\//i.test(value)) return false;
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return false;
  }
  if (!URL_SCHEMES.has(url.protocol)) return false;
  const host = url.hostname;
  return host === 'localhost' || IPV4.test(host) || host.startsWith('[') || DOMAIN.test(host);
}

/**
 * A value for `field`, checked by the field's type; returns the text to store
 * (a person picker's user id list as JSON). Messages name the field by its label.
 */
export async function checkValue(db: Executor, realmId: number, field: CustomProfileField, value: string | number[]): Promise<string> {
  const name = field.name;
  switch (field.field_type) {
    case FIELD_TYPE.SHORT_TEXT:
    case FIELD_TYPE.EXTERNAL_ACCOUNT:
    case FIELD_TYPE.PRONOUNS:
      return cappedString(name, value, LIMITS.shortText);
    case FIELD_TYPE.LONG_TEXT:
      return cappedString(name, value, LIMITS.longText);
    case FIELD_TYPE.DATE:
      if (!isDate(cappedString(name, value, Infinity))) throw badRequest(`${name} is not a date`);
      return value as string;
    case FIELD_TYPE.URL:
      if (!isUrl(cappedString(name, value, Infinity))) throw badRequest(`${name} is not a URL`);
      return value as string;
    case FIELD_TYPE.SELECT: {
      const choice = cappedString(name, value, Infinity);
      if (!Object.hasOwn(parseFieldData(field.field_data), choice)) throw badRequest(`'${choice}' is not a valid choice for '${name}'.`);
      return choice;
    }
    case FIELD_TYPE.USER:
      return JSON.stringify(await checkPersonList(db, realmId, value));
    default:
      throw new Error(`unknown custom profile field type ${field.field_type}`);
  }
}

/** A person picker's value: active, human users of the organization. */
async function checkPersonList(db: Executor, realmId: number, value: string | number[]): Promise<number[]> {
  if (!Array.isArray(value)) throw badRequest('User IDs is not a list');
  if (value.length === 0) return value;
  const found = await db.selectFrom('users').select(['id', 'is_active', 'is_bot']).where('realm_id', '=', realmId).where('id', 'in', value).execute();
  const byId = new Map(found.map((u) => [u.id, u]));
  for (const id of value) {
    const user = byId.get(id);
    if (!user) throw badRequest(`Invalid user ID: ${id}`);
    if (!user.is_active) throw badRequest(`User with ID ${id} is deactivated`);
    if (user.is_bot) throw badRequest(`User with ID ${id} is a bot`);
  }
  return value;
}
