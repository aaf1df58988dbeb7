// GitHub: the event named in X-GitHub-Event; ping, push and issues for now.
import type { Integration } from './index.ts';
import { eventHeader, jsonBody, list, maybe, num, obj, str, unsupportedEvent, type JsonObject } from './payload.ts';
import { branchOf, issueMessage, pushMessage } from './git.ts';

const repoName = (p: JsonObject) => str(p, 'repository', 'name');
const sender = (p: JsonObject) => str(p, 'sender', 'login');

function ping(p: JsonObject) {
  const topic = maybe(p, 'repository') ? repoName(p) : str(p, 'organization', 'login');
  return { topic, content: `GitHub webhook has been successfully configured by ${sender(p)}.` };
}

function push(p: JsonObject) {
  const ref = str(p, 'ref');
  const repo = repoName(p);
  if (ref.startsWith('refs/tags/')) {
    const action = maybe(p, 'deleted') === true ? 'removed' : 'pushed';
    return { topic: repo, content: `${sender(p)} ${action} tag ${ref.slice('refs/tags/'.length)}.` };
  }
  const commits = list(p, 'commits').map((_c, i) => {
    const author = maybe(obj(p, 'commits', i, 'author'), 'username');
    return {
      name: typeof author === 'string' && author !== '' ? author : str(p, 'commits', i, 'author', 'name'),
      sha: str(p, 'commits', i, 'id'),
      url: str(p, 'commits', i, 'url'),
      message: str(p, 'commits', i, 'message'),
    };
  });
  const branch = branchOf(ref);
  const content = pushMessage({
    user: sender(p),
    compareUrl: str(p, 'compare'),
    branch,
    commits,
    deleted: maybe(p, 'deleted') === true,
    forced: maybe(p, 'forced') === true,
  });
  return { topic: `${repo} / ${branch}`, content };
}

function issues(p: JsonObject, userTopic: string | undefined) {
  const action = str(p, 'action');
  if (!['opened', 'closed', 'reopened', 'edited', 'deleted'].includes(action)) throw unsupportedEvent('GitHub', `issues_${action}`);
  const number = num(p, 'issue', 'number');
  const title = str(p, 'issue', 'title');
  const body = maybe(p.issue, 'body');
  const content = issueMessage({
    user: sender(p),
    action,
    type: 'issue',
    url: str(p, 'issue', 'html_url'),
    number,
    // With the URL's own topic, the message names the issue in full.
    title: userTopic !== undefined ? title : undefined,
    body: action === 'opened' && typeof body === 'string' ? body : undefined,
  });
  return { topic: `${repoName(p)} / issue #${number} ${title}`, content };
}

export const github: Integration = {
  name: 'github',
  displayName: 'GitHub',
  allEventTypes: ['ping', 'push', 'issues'],
  handle(req, { userTopic }) {
    const event = eventHeader(req, 'X-GitHub-Event');
    const payload = jsonBody(req);
    if (event === 'ping') return [ping(payload)];
    if (event === 'push') return [push(payload)];
    if (event === 'issues') return [issues(payload, userTopic)];
    throw unsupportedEvent('GitHub', event);
  },
};
