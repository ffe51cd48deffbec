import type { Knex } from '../../shared/db/knex';

export type DeliveryStatus = 'queued' | 'sent' | 'failed';

export interface Claim {
  attempts: number;
  /** Set when an earlier attempt claimed the row and never recorded an outcome (it died mid-send). */
  interruptedClaim: string | null;
}

/**
 * Claims a queued delivery for one attempt and commits that before anything is sent:
 * attempts + 1 and our token. Answers undefined when the row is not queued (already sent
 * or failed: nothing to do) or not visible (see waitForQueuingTransaction).
 */
export async function claimDelivery(db: Knex, id: number, token: string): Promise<Claim | undefined> {
  const { rows } = await db.raw(
    `WITH prev AS (SELECT id, claim_token FROM deliveries WHERE id = ? AND status = 'queued' FOR UPDATE)
     UPDATE deliveries d
        SET attempts = d.attempts + 1, claim_token = ?, claimed_at = now(), updated_at = now()
       FROM prev WHERE d.id = prev.id
     RETURNING d.attempts, prev.claim_token AS interrupted_claim`,
    [id, token],
  );
  const row = rows[0] as { attempts: number; interrupted_claim: string | null } | undefined;
  return row ? { attempts: row.attempts, interruptedClaim: row.interrupted_claim } : undefined;
}

export async function deliveryStatus(db: Knex, id: number): Promise<DeliveryStatus | undefined> {
  const row = await db('deliveries').first('status').where({ id });
  return row?.status;
}

/**
 * The gateway queues a message's job before the transaction that made its delivery row
 * commits, holding the event row FOR UPDATE meanwhile. A worker that got there first waits
 * here (FOR KEY SHARE conflicts with FOR UPDATE) until that transaction has ended; after
 * it, the row either exists or never will.
 */
export async function waitForQueuingTransaction(db: Knex, eventId: number): Promise<void> {
  await db.raw('SELECT 1 FROM events WHERE id = ? FOR KEY SHARE', [eventId]);
}

/** The server took it. Only the claim's holder records it (a stale attempt cannot overwrite). */
export async function markSent(db: Knex, id: number, token: string, messageId: string): Promise<boolean> {
  const n = await db('deliveries')
    .where({ id, claim_token: token })
    .update({ status: 'sent', sent_at: db.fn.now(), message_id: messageId, error: null, claim_token: null, updated_at: db.fn.now() });
  return n > 0;
}

/** Failed for good: a permanent reply, or the last attempt. */
export async function markFailed(db: Knex, id: number, token: string, error: string): Promise<void> {
  await db('deliveries').where({ id, claim_token: token }).update({ status: 'failed', error, claim_token: null, updated_at: db.fn.now() });
}

/** A temporary failure: nothing was delivered, the row waits for the next attempt. */
export async function releaseClaim(db: Knex, id: number, token: string, error: string): Promise<void> {
  await db('deliveries').where({ id, claim_token: token }).update({ error, claim_token: null, updated_at: db.fn.now() });
}
