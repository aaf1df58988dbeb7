// GitLab: the event named in X-Gitlab-Event; pushes, tag pushes and issues for now.
// With the URL's own topic, each message starts with the project it is about.
import type { Integration } from './index.ts';
import { eventHeader, jsonBody, list, maybe, num, str, unsupportedEvent, type JsonObject, type WebhookMessage } from './payload.ts';
import { branchOf, issueMessage, pushMessage } from './git.ts';

const ZERO_SHA = '0000000000000000000000000000000000000000';
const ISSUE_ACTIONS: Record<string, string> = { open: 'created', update: 'updated', close: 'closed', reopen: 'reopened' };

const project = (p: JsonObject) => str(p, 'project', 'name');

function push(p: JsonObject) {
  const branch = branchOf(str(p, 'ref'));
  const user = str(p, 'user_name');
  const topic = `${project(p)} / ${branch}`;
  if (str(p, 'after') === ZERO_SHA) return { topic, content: `${user} deleted branch ${branch}.` };
  const commits = list(p, 'commits').map((_c, i) => ({
    name: str(p, 'commits', i, 'author', 'name'),
    sha: str(p, 'commits', i, 'id'),
    url: str(p, 'commits', i, 'url'),
    message: str(p, 'commits', i, 'message'),
  }));
  const compareUrl = `${str(p, 'project', 'web_url')}/-/compare/${str(p, 'before')}...${str(p, 'after')}`;
  return { topic, content: pushMessage({ user, compareUrl, branch, commits, deleted: false, forced: false }) };
}

function tagPush(p: JsonObject) {
  const tag = str(p, 'ref').replace(/^refs\/tags\//, '');
  // A removed tag has no commit left to check out.
  const action = maybe(p, 'checkout_sha') ? 'pushed' : 'removed';
  return { topic: project(p), content: `${str(p, 'user_name')} ${action} tag ${tag}.` };
}

function issue(p: JsonObject, userTopic: string | undefined) {
  const kind = str(p, 'object_attributes', 'action');
  const action = ISSUE_ACTIONS[kind];
  if (!action) throw unsupportedEvent('GitLab', `issue_${kind}`);
  const number = num(p, 'object_attributes', 'iid');
  const title = str(p, 'object_attributes', 'title');
  const description = maybe(p.object_attributes, 'description');
  const assignees = (maybe(p, 'assignees') as JsonObject[] | undefined)?.map((a) => str(a, 'name'));
  const content = issueMessage({
    user: str(p, 'user', 'name'),
    action,
    type: 'issue',
    url: str(p, 'object_attributes', 'url'),
    number,
    title: userTopic !== undefined ? title : undefined,
    assignees: kind === 'open' ? assignees : undefined,
    // Hidden comments in the description stay hidden.
    body: kind === 'open' && typeof description === 'string' ? description.replace(/<!--[\s\S]*?-->/g, '').trim() || undefined : undefined,
  });
  return { topic: `${project(p)} / issue #${number} ${title}`, content };
}

export const gitlab: Integration = {
  name: 'gitlab',
  displayName: 'GitLab',
  allEventTypes: ['Push Hook', 'Tag Push Hook', 'Issue Hook'],
  handle(req, { userTopic }) {
    const event = eventHeader(req, 'X-Gitlab-Event');
    const payload = jsonBody(req);
    let message: WebhookMessage;
    if (event === 'Push Hook') message = push(payload);
    else if (event === 'Tag Push Hook') message = tagPush(payload);
    else if (event === 'Issue Hook' || event === 'Confidential Issue Hook') message = issue(payload, userTopic);
    else throw unsupportedEvent('GitLab', event);
    if (userTopic !== undefined) message.content = `[[${project(payload)}](${str(payload, 'project', 'web_url')})] ${message.content}`;
    return [message];
  },
};
