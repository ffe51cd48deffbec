import { afterDeliveryFailed } from '../../shared/invites/delivery-failures';
import { recordInviteeResponse } from '../../shared/invites/responses';
import { type InboundReplyJob, inboundReplyJob } from '../../shared/queues/inbound-reply.job';
import type { WorkerDefinition } from '../../shared/queues/worker';
import { readItipReply } from './itip-reply';
import { findReplyHolder, markBounced } from './replies.repository';

/** What became of one inbound message (the job's return value, and its log line). */
export type InboundOutcome = { recorded: 'response' | 'bounce' } | { ignored: string };

/**
 * The inbound-replies queue's worker: records each reply or bounce the SMTP server took.
 * Idempotent, so a job run twice (a crash, a retry) records the same thing: a reply sets
 * the invitee's answer unless a newer one is there (see recordResponse), a bounce marks
 * the newest sent message failed (marked once: it is then no longer `sent`).
 */
export function inboundWorker(): WorkerDefinition<InboundReplyJob, InboundOutcome> {
  return {
    contract: inboundReplyJob,
    concurrency: 4,
    async process(job, c, log) {
      const data = job.data;
      const outcome = await c.db.transaction(async (trx): Promise<InboundOutcome> => {
        const holder = await findReplyHolder(trx, c.config.appKey, { inviteeId: data.inviteeId, mac: data.mac });
        // Removed from the guest list (or the event deleted) since the message came.
        if (!holder) return { ignored: 'invitee_gone' };
        const at = c.clock.now();
        if (data.kind === 'bounce' && data.bounce) {
          const b = data.bounce;
          if (b.action !== 'failed') return { ignored: `bounce_${b.action}` };
          const reason = `bounced: ${b.status}${b.diagnostic ? ` ${b.diagnostic}` : ''}`;
          const row = await markBounced(trx, holder.id, reason);
          if (!row) return { ignored: 'nothing_sent' };
          await afterDeliveryFailed(trx, row, reason, b.status.startsWith('5'), at);
          return { recorded: 'bounce' };
        }
        const reading = readItipReply(data.calendar ?? '', data.contentMethod, holder.event_uid, holder.email);
        if ('ignored' in reading) return reading;
        const recorded = await recordInviteeResponse(trx, {
          inviteeId: holder.id,
          teamId: holder.team_id,
          eventUid: holder.event_uid,
          response: reading.answer,
          sequence: reading.sequence,
          at: new Date(data.receivedAtMs),
        });
        return recorded === 'recorded' ? { recorded: 'response' } : { ignored: recorded };
      });
      log.info({ kind: data.kind, ...outcome, messageId: data.messageId }, 'inbound message handled');
      return outcome;
    },
  };
}
