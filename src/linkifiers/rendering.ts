// Linkifiers in the organization's Markdown and topics: the render context's
// `linkifiers`, and `topic_links` for messages.

import type { Executor } from '../db/schema.ts';
import type { ReferenceResolver } from '../rendering/index.ts';
import { topicLinks, type Linkifier, type TopicLink } from '../markdown/index.ts';
import { listLinkifiers } from './queries.ts';

/**
 * Every render gets the organization's linkifiers: any text may match one. Outside a transaction
 * (a message's prerender) from the process's cache; inside one, read there (it may have changed them).
 */
export const resolveLinkifiers: ReferenceResolver = async (svc, db, realm) => {
  const read = () => listLinkifiers(db, realm.id);
  const linkifiers = db === svc.db ? await svc.linkifiers.get(realm.id, read) : await read();
  return linkifiers.length > 0 ? { linkifiers } : {};
};

/** `topic_links` of one topic: linkifier matches and bare URLs. */
export async function topicLinksFor(db: Executor, realmId: number, topic: string): Promise<TopicLink[]> {
  return topicLinks(topic, await listLinkifiers(db, realmId));
}

/** For many messages at once (one read of the linkifiers): topic -> `topic_links` (shared arrays: do not mutate). */
export async function topicLinker(db: Executor, realmId: number): Promise<(topic: string) => TopicLink[]> {
  return topicLinkerOf(await listLinkifiers(db, realmId));
}

/** topicLinker, for linkifiers the caller has read. */
export function topicLinkerOf(linkifiers: Linkifier[]): (topic: string) => TopicLink[] {
  const cache = new Map<string, TopicLink[]>();
  return (topic) => {
    let links = cache.get(topic);
    if (!links) {
      links = topicLinks(topic, linkifiers);
      cache.set(topic, links);
    }
    return links;
  };
}
