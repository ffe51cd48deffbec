import type { Redis } from '../../../shared/queues/redis';
import { type QueuedKey, queuedPage } from '../../../shared/queues/submission-index';

/**
 * Submissions between their 202 and their record, read from the index the gateway writes
 * when it accepts them (shared/queues/submission-index.ts), never from the queue's jobs.
 */
/**
 * A page of a link's queued submissions, newest first, without those `recorded` says are
 * written already (the worker forgets them once written; one accepted in the moment the
 * worker wrote it may be listed here still). Reads a few pages' worth at most per call.
 */
export async function queuedSubmissionsPage(
  redis: Redis,
  prefix: string,
  linkId: number,
  opts: { after?: QueuedKey; limit: number; recorded: (uids: string[]) => Promise<Set<string>> },
): Promise<{ page: QueuedKey[]; more: boolean }> {
  const page: QueuedKey[] = [];
  let after = opts.after;
  for (;;) {
    const keys = await queuedPage(redis, prefix, linkId, after, opts.limit + 1);
    const recorded = await opts.recorded(keys.map((k) => k[1]));
    for (const key of keys) {
      if (recorded.has(key[1])) continue;
      if (page.length === opts.limit) return { page, more: true };
      page.push(key);
    }
    if (keys.length < opts.limit + 1) return { page, more: false };
    after = keys[keys.length - 1];
  }
}
