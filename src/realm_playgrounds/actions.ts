// Code playgrounds (the reference's realm_playgrounds): administrators add and
// remove them; every change sends the whole list as a `realm_playgrounds` event
// to every user. Checked as the reference's model is (full_clean): fields, then
// the template's variables, then uniqueness, reported as `errors`.

import type { Services } from '../services.ts';
import type { Realm } from '../realm/tables.ts';
import type { User } from '../users/tables.ts';
import { type ActionContext, transactAs } from '../db/transact.ts';
import { badRequest } from '../http/errors.ts';
import { activeUserIds } from '../users/queries.ts';
import { NON_FIELD_ERRORS, templateVariables, validationFailure, type ValidationErrors } from '../linkifiers/validation.ts';
import { listPlaygrounds } from './queries.ts';
import { requireAdmin } from '../users/access.ts';

export interface RealmPlaygroundsEvent {
  type: 'realm_playgrounds';
  realm_playgrounds: { id: number; name: string; pygments_language: string; url_template: string }[];
}

export interface PlaygroundInput {
  name: string;
  pygments_language: string;
  url_template: string;
}

const BLANK = 'This field cannot be blank.';
const DUPLICATE = 'Realm playground with this Realm, Pygments language and Name already exists.';

async function notifyPlaygrounds(ctx: ActionContext<unknown>): Promise<void> {
  const { tx, emit, realm } = ctx;
  emit(realm.id, { type: 'realm_playgrounds', realm_playgrounds: await listPlaygrounds(tx, realm.id) }, await activeUserIds(tx, realm.id));
}

function playgroundErrors(input: PlaygroundInput): ValidationErrors {
  const errors: ValidationErrors = {};
  const add = (key: string, msg: string) => (errors[key] ??= []).push(msg);
  if (input.name === '') add('name', BLANK);
  if (input.pygments_language === '') add('pygments_language', BLANK);
  const variables = templateVariables(input.url_template);
  if (input.url_template === '') add('url_template', BLANK);
  else if (variables === null) add('url_template', 'Invalid URL template.');
  else if (!variables.includes('code')) add(NON_FIELD_ERRORS, 'Missing the required variable "code" in the URL template');
  else if (variables.length !== 1) add(NON_FIELD_ERRORS, '"code" should be the only variable present in the URL template');
  return errors;
}

/** POST /realm/playgrounds: the values arrive stripped. */
export async function addPlayground(svc: Services, realm: Realm, actor: User, input: PlaygroundInput): Promise<number> {
  requireAdmin(actor);
  return transactAs(svc, realm, actor, async (ctx) => {
    const { tx } = ctx;
    // One change at a time per organization, so that the uniqueness read stays true.
    await tx.selectFrom('realms').select('id').where('id', '=', realm.id).forNoKeyUpdate().execute();
    const errors = playgroundErrors(input);
    const same = await tx
      .selectFrom('realm_playgrounds')
      .select('id')
      .where('realm_id', '=', realm.id)
      .where('pygments_language', '=', input.pygments_language)
      .where('name', '=', input.name)
      .executeTakeFirst();
    if (same) (errors[NON_FIELD_ERRORS] ??= []).push(DUPLICATE);
    if (Object.keys(errors).length > 0) throw validationFailure(errors);
    const row = await tx
      .insertInto('realm_playgrounds')
      .values({ realm_id: realm.id, ...input })
      .returning('id')
      .executeTakeFirstOrThrow();
    await notifyPlaygrounds(ctx);
    return row.id;
  });
}

/** DELETE /realm/playgrounds/{playground_id}. */
export async function removePlayground(svc: Services, realm: Realm, actor: User, playgroundId: number): Promise<void> {
  requireAdmin(actor);
  await transactAs(svc, realm, actor, async (ctx) => {
    const { tx } = ctx;
    const removed = await tx.deleteFrom('realm_playgrounds').where('realm_id', '=', realm.id).where('id', '=', playgroundId).returning('id').executeTakeFirst();
    if (!removed) throw badRequest('Invalid playground');
    await notifyPlaygrounds(ctx);
  });
}
