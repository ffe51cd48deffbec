import { afterDeliveryFailed } from '../../shared/invites/delivery-failures';
import type { Knex } from '../../shared/db/knex';
import type { MailMessage } from '../../shared/queues/mail.job';

/** A job's name for a row: its id and random key, which must both match (see MailMessage.key). */
export type DeliveryRef = Pick<MailMessage, 'deliveryId' | 'key'>;

/** The refs as two arrays for unnest(): rows are matched on both, a keyless ref only to a keyless row. */
const refArrays = (refs: DeliveryRef[]): Knex.RawBinding[] => [
  refs.map((r) => r.deliveryId),
  // pg writes null array items as NULL; knex's types allow no null inside an array binding.
  refs.map((r) => r.key ?? null) as unknown as string[],
];
const MATCH = `JOIN unnest(?::bigint[], ?::uuid[]) AS ref(id, key) ON d.id = ref.id AND d.key IS NOT DISTINCT FROM ref.key`;

type DeliveryStatus = 'queued' | 'sent' | 'failed';

export interface Claim {
  attempts: number;
  /** Set when an earlier attempt claimed the row and never recorded an outcome (it died mid-send). */
  interruptedClaim: string | null;
}

/**
 * Claims the queued deliveries among `ids` for one attempt, committed before anything is
 * sent: attempts + 1 and our token. Rows that are not queued (sent or failed: nothing to
 * do) or not visible yet (see waitForQueuingTransaction) are not in the answer.
 */
export async function claimDeliveries(db: Knex, refs: DeliveryRef[], token: string): Promise<Map<number, Claim>> {
  const { rows } = await db.raw(
    `WITH prev AS (
       SELECT d.id, d.claim_token FROM deliveries d ${MATCH} WHERE d.status = 'queued' ORDER BY d.id FOR UPDATE OF d
     )
     UPDATE deliveries d
        SET attempts = d.attempts + 1, claim_token = ?, claimed_at = now(), updated_at = now()
       FROM prev WHERE d.id = prev.id
     RETURNING d.id, d.attempts, prev.claim_token AS interrupted_claim`,
    [...refArrays(refs), token],
  );
  return new Map(
    (rows as Array<{ id: number; attempts: number; interrupted_claim: string | null }>).map((r) => [r.id, { attempts: r.attempts, interruptedClaim: r.interrupted_claim }]),
  );
}

/** The statuses of the rows these refs name (a row whose key differs is not theirs: absent). */
export async function deliveryStatuses(db: Knex, refs: DeliveryRef[]): Promise<Map<number, DeliveryStatus>> {
  const { rows } = await db.raw(`SELECT d.id, d.status FROM deliveries d ${MATCH}`, refArrays(refs));
  return new Map((rows as Array<{ id: number; status: DeliveryStatus }>).map((r) => [r.id, r.status]));
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

/**
 * The server took these. Only a claim's holder records its row (an attempt that lost its
 * claim cannot overwrite); answers the ids recorded.
 */
export async function markSent(db: Knex, sent: Array<{ id: number; token: string; messageId: string }>): Promise<Set<number>> {
  const { rows } = await db.raw(
    `UPDATE deliveries d
        SET status = 'sent', sent_at = now(), message_id = v.message_id, error = NULL, claim_token = NULL, updated_at = now()
       FROM unnest(?::bigint[], ?::text[], ?::text[]) AS v(id, token, message_id)
      WHERE d.id = v.id AND d.claim_token = v.token
     RETURNING d.id`,
    [sent.map((s) => s.id), sent.map((s) => s.token), sent.map((s) => s.messageId)],
  );
  return new Set((rows as Array<{ id: number }>).map((r) => r.id));
}

/** Failed for good: a permanent reply, or the last attempt. */
export async function markFailed(db: Knex, id: number, token: string, error: string): Promise<void> {
  await db.transaction(async (trx) => {
    const [row] = (await trx('deliveries')
      .where({ id, claim_token: token })
      .update({ status: 'failed', error, claim_token: null, updated_at: trx.fn.now() })
      .returning(['invitee_id', 'team_id', 'email'])) as Array<{ invitee_id: number | null; team_id: number; email: string }>;
    if (!row) return;
    // Refused for good by the recipient's server (a 5xx reply).
    await afterDeliveryFailed(trx, row, error, /^5\d\d\b/.test(error), new Date());
  });
}

/** A temporary failure: nothing was delivered, the row waits for the next attempt. */
export async function releaseClaim(db: Knex, id: number, token: string, error: string): Promise<void> {
  await db('deliveries').where({ id, claim_token: token }).update({ error, claim_token: null, updated_at: db.fn.now() });
}
