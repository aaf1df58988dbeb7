// The messages every git hosting integration shares (the reference's
// zerver/lib/webhooks/git.py): pushes with their commits, and issue events.

export interface CommitInfo {
  /** Who wrote it (a username where the service gives one). */
  name: string;
  sha: string;
  url: string;
  message: string;
}

/** Commits listed in one push message; more are counted. */
export const COMMITS_LIMIT = 20;
/** Committers named in one push message; more are "others". */
const COMMITTERS_LIMIT = 3;

function commitsList(commits: CommitInfo[]): string {
  let text = commits
    .slice(0, COMMITS_LIMIT)
    .map((c) => `* ${c.message.split('\n')[0]} ([${c.sha.slice(0, 11)}](${c.url}))\n`)
    .join('');
  if (commits.length > COMMITS_LIMIT) text += `[and ${commits.length - COMMITS_LIMIT} more commit(s)]`;
  return text.trimEnd();
}

/** Committers by number of commits, then name; beyond the limit, "others". */
function committers(commits: CommitInfo[]): [string, number][] {
  const counts = new Map<string, number>();
  for (const c of commits) counts.set(c.name, (counts.get(c.name) ?? 0) + 1);
  const sorted = [...counts].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
  if (sorted.length <= COMMITTERS_LIMIT) return sorted;
  const others = sorted.slice(COMMITTERS_LIMIT).reduce((n, [, k]) => n + k, 0);
  return [...sorted.slice(0, COMMITTERS_LIMIT), ['others', others]];
}

export function pushMessage(p: { user: string; compareUrl: string; branch: string; commits: CommitInfo[]; deleted: boolean; forced: boolean }): string {
  if (p.commits.length === 0 && p.deleted) return `${p.user} [deleted](${p.compareUrl}) the branch ${p.branch}.`;
  const pushType = p.forced ? 'force pushed' : 'pushed';
  if (p.commits.length === 0) return `${p.user} [${pushType}](${p.compareUrl}) the branch ${p.branch}.`;
  const n = p.commits.length;
  const pushed = `[${pushType}](${p.compareUrl}) ${n} commit${n > 1 ? 's' : ''}`;
  const who = committers(p.commits);
  if (who.length === 1 && who[0][0] === p.user) return `${p.user} ${pushed} to branch ${p.branch}.\n\n${commitsList(p.commits)}`;
  const named = who.map(([name, count]) => `${name} (${count})`);
  const details = named.length > 1 ? `${named.slice(0, -1).join(', ')} and ${named[named.length - 1]}` : named[0];
  return `${p.user} ${pushed} to branch ${p.branch}. Commits by ${details}.\n\n${commitsList(p.commits)}`;
}

/** "<user> <action> [issue #N title](url) (assigned to ...)", then the quoted body or a period. */
export function issueMessage(p: {
  user: string;
  action: string;
  type: string;
  url: string;
  number: number;
  title?: string;
  assignees?: string[];
  body?: string;
}): string {
  let text = `${p.user} ${p.action} [${p.type} #${p.number}${p.title ? ` ${p.title}` : ''}](${p.url})`;
  if (p.assignees && p.assignees.length > 0) {
    const names = p.assignees.length > 1 ? `${p.assignees.slice(0, -1).join(', ')} and ${p.assignees[p.assignees.length - 1]}` : p.assignees[0];
    text += ` (assigned to ${names})`;
  }
  return p.body ? `${text}:\n\n~~~ quote\n${p.body}\n~~~` : `${text}.`;
}

/** "refs/heads/main" -> "main". */
export const branchOf = (ref: string) => ref.replace(/^refs\/heads\//, '');
