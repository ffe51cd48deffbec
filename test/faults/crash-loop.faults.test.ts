import { Queue } from 'bullmq';
import type { Knex } from '../../shared/db/knex';
import { extractionFinishedChannel, extractionJob } from '../../shared/queues/extraction.job';
import { mailJob } from '../../shared/queues/mail.job';
import { closeRedis, createRedis } from '../../shared/queues/redis';
import { smartLinkJob } from '../../shared/queues/smart-link.job';
import { FaultTally } from '../helpers/fault-summary';
import { startGateway, type TestGateway } from '../helpers/gateway';
import type { Spawned } from '../helpers/processes';
import { crash, drained, isolatedPrefix, spawnWorker, type WorkerKind, type WorkerProcess } from '../helpers/service-processes';
import { type SmtpSink, startSmtpSink } from '../helpers/smtp';
import { waitFor } from '../helpers/wait';
import { newLink, submitForm } from '../smart-links/helpers';
import { auditEmails, auditSubmissions } from './fault-checks';

/**
 * A crash loop: each worker is killed with SIGKILL three times in a row while it holds its
 * jobs (active, their locks held) and Postgres is slow (a row lock held by another session
 * keeps every job waiting), as an OOM kill or a liveness probe restarting a busy worker
 * would. BullMQ's default fails a job on its second stall; here no stall, however often,
 * turns accepted work into failed work: once Postgres is fast again, everything is done
 * exactly once.
 */
jest.setTimeout(180_000);

const prefix = isolatedPrefix('crash_loop');
const KILLS = 3;
let gw: TestGateway;
const procs: Spawned[] = [];
const queues: Queue[] = [];
const queueOf = (name: string) => {
  const queue = new Queue(name, { connection: gw.redis, prefix });
  queues.push(queue);
  return queue;
};

beforeAll(async () => {
  gw = await startGateway({ QUEUE_PREFIX: prefix });
});
const holds: Knex.Transaction[] = [];
afterAll(async () => {
  for (const trx of holds) if (!trx.isCompleted()) await trx.rollback();
  for (const p of procs) await crash(p);
  for (const q of queues) {
    await q.obliterate({ force: true });
    await q.close();
  }
  await gw.close();
});

async function start(kind: WorkerKind, env: Record<string, string>): Promise<WorkerProcess> {
  // A dead worker's jobs are taken over after about a second instead of thirty.
  const spawned = await spawnWorker(kind, { QUEUE_PREFIX: prefix, WORKER_LOCK_MS: '1000', ...env });
  procs.push(spawned);
  return spawned;
}

/** A transaction holding row locks: Postgres is "slow" for whoever needs those rows until it ends. */
async function holdRows(sql: string, bindings: Knex.RawBinding[]): Promise<{ trx: Knex.Transaction; pid: number }> {
  const trx = await gw.db.transaction();
  holds.push(trx);
  await trx.raw(sql, bindings);
  const { rows } = await trx.raw('SELECT pg_backend_pid() AS pid');
  return { trx, pid: rows[0].pid as number };
}

/** Sessions of a service waiting on the held lock (the pids of killed workers' sessions linger until it is released). */
async function blockedSessions(app: string, holder: number): Promise<number[]> {
  const { rows } = await gw.db.raw('SELECT pid FROM pg_stat_activity WHERE application_name = ? AND ?::int = ANY(pg_blocking_pids(pid))', [app, holder]);
  return (rows as Array<{ pid: number }>).map((r) => r.pid);
}

/**
 * Starts the worker, waits until it is stuck on the lock holding jobs, kills it; KILLS times.
 * From the second run on it must be holding a job that has already stalled once per run
 * before it (BullMQ counts a job's stalls in `stalledCounter`, raised when a dead worker's
 * job is taken back), so by the last run a job has stalled KILLS - 1 times while held and
 * is about to stall once more. A job failed by a stall shows at once: the loop stops with
 * its reason.
 */
async function crashLoop(kind: WorkerKind, env: Record<string, string>, queue: Queue, holder: number): Promise<void> {
  const seen = new Set<number>();
  for (let i = 0; i < KILLS; i++) {
    const worker = await start(kind, env);
    await waitFor(
      async () => {
        const failed = await queue.getFailed(0, 0);
        if (failed.length) throw new Error(`a job failed after ${i} crashes: ${failed[0].failedReason}`);
        const fresh = (await blockedSessions(kind, holder)).filter((pid) => !seen.has(pid));
        // Jobs a dead run held stay listed as active until they are taken back, with the
        // count of the stalls before; only a job the live run holds has stalled i times.
        const retaken = (await queue.getActive()).filter((job) => job.stalledCounter >= i);
        if (!fresh.length || !retaken.length) return undefined;
        fresh.forEach((pid) => seen.add(pid));
        return retaken;
      },
      { what: `${kind} (run ${i + 1}) holding a job stalled ${i} times, stuck on the lock`, timeoutMs: 30_000 },
    );
    await crash(worker);
  }
}

describe('a crash loop while Postgres is slow', () => {
  it('smart-link worker killed three times: every 202 becomes exactly one event', async () => {
    const tally = new FaultTally('5a. crash loop: smart-link worker SIGKILL x3 while Postgres is slow', 'submission');
    const team = await gw.newTeam({ plan: 'unlimited' });
    const { link } = await newLink(gw, team);
    const queue = queueOf(smartLinkJob.queue);
    const accepted = new Map<string, string>();
    await Promise.all(
      Array.from({ length: 300 }, async (_, i) => {
        const title = `Crash loop ${i}`;
        const res = await tally.send(() => submitForm(link.url, { title, start: '2030-05-01 10:00', duration: '30' }));
        if (res?.status === 202) accepted.set(res.body.data.id as string, title);
      }),
    );
    expect(accepted.size).toBe(300);
    // Every batch needs the link's calendar (FOR KEY SHARE): held FOR UPDATE here.
    const held = await holdRows('SELECT id FROM calendars WHERE team_id = ? FOR UPDATE', [team.teamId]);
    await crashLoop('smart-link-worker', {}, queue, held.pid);

    await start('smart-link-worker', {});
    await held.trx.rollback();
    await waitFor(() => drained(queue), { what: 'the queue to drain', timeoutMs: 60_000 });
    const audit = await auditSubmissions(gw.db, team.teamId, accepted);
    Object.assign(tally, { lost: audit.lost, duplicated: audit.duplicated });
    tally.note = `killed ${KILLS} times holding every job; 0 failed`;
    tally.save();
    expect(audit).toEqual({ lost: 0, duplicated: 0, unacceptedStored: 0 });
    expect(await queue.getFailedCount()).toBe(0);
  });

  it('extraction worker killed three times: every extraction completes exactly once', async () => {
    const tally = new FaultTally('5b. crash loop: extraction worker SIGKILL x3 while Postgres is slow', 'extraction');
    const team = await gw.newTeam({ plan: 'unlimited' });
    const queue = queueOf(extractionJob.queue);
    const announced = new Map<string, number>();
    const sub = createRedis(process.env.TEST_REDIS_URL as string, 'worker');
    sub.on('message', (_channel: string, id: string) => announced.set(id, (announced.get(id) ?? 0) + 1));
    await sub.subscribe(extractionFinishedChannel(prefix));
    try {
      const TOTAL = 40;
      const texts = new Map<string, number>();
      await Promise.all(
        Array.from({ length: TOTAL }, async (_, i) => {
          const res = await tally.send(() => team.api.post('/api/events/extract', { text: `Crash review C${i} next Tuesday at 1pm at Cafe Luna`, timezone: 'UTC', reference_date: '2030-01-01T09:00:00Z' }));
          if (res?.status === 202) texts.set(res.body.data.id as string, i);
        }),
      );
      expect(texts.size).toBe(TOTAL);
      // A worker reads its row, extracts, then waits to write the result.
      const held = await holdRows('SELECT id FROM extractions WHERE team_id = ? FOR UPDATE', [team.teamId]);
      await crashLoop('extraction-worker', {}, queue, held.pid);

      await start('extraction-worker', {});
      await held.trx.rollback();
      await waitFor(() => drained(queue), { what: 'the extractions queue to drain', timeoutMs: 60_000 });
      const rows: Array<{ uid: string; status: string; result: { title: string } | null }> = await gw.db('extractions').where({ team_id: team.teamId }).select('uid', 'status', 'result');
      tally.lost = TOTAL - rows.filter((r) => r.status === 'completed' && r.result?.title === `Crash review C${texts.get(`ext_${r.uid}`)}`).length;
      // Each row is written once (only a pending row is written) and announced at most once.
      // The UPDATE a killed worker had sent still runs once the lock is released (Postgres
      // finishes a statement whose client is gone): that row is completed, by the dead
      // worker's result, and not announced (the announcement is best effort: a waiting
      // request answers 202 and the client reads the result with a GET).
      tally.duplicated = [...announced.values()].reduce((n, c) => n + c - 1, 0);
      tally.note = `killed ${KILLS} times holding jobs; ${TOTAL - announced.size} completed by the statements of killed workers, unannounced`;
      tally.save();
      expect(tally.lost).toBe(0);
      expect(tally.duplicated).toBe(0);
      expect([...announced.keys()].every((id) => texts.has(id))).toBe(true);
      expect(await queue.getFailedCount()).toBe(0);
    } finally {
      await closeRedis(sub);
    }
  });

  describe('mail', () => {
    let sink: SmtpSink;
    beforeAll(async () => {
      sink = await startSmtpSink();
    });
    afterAll(() => sink.close());

    it('mail worker killed three times: every invitation is delivered exactly once', async () => {
      const tally = new FaultTally('5c. crash loop: mail worker SIGKILL x3 while Postgres is slow', 'email');
      const team = await gw.newTeam();
      const cal = (await team.api.post('/api/calendars', { name: 'Main', timezone: 'UTC' })).body.data;
      const evt = (await team.api.post(`/api/calendars/${cal.public_id}/events`, { title: 'Crash loop party', date_start: '2030-11-02 15:00', date_end: '2030-11-02 16:00', timezone: 'UTC' })).body.data;
      const emails = Array.from({ length: 30 }, (_, i) => `loop${i}@example.test`);
      const queue = queueOf(mailJob.queue);
      const invited = await team.api.post(`/api/calendars/${cal.public_id}/events/${evt.public_id}/invites`, { invitees: emails.map((email) => ({ email })) });
      expect(invited.status).toBe(200);
      tally.acceptedItems(emails.length);
      // A job claims its delivery rows (FOR UPDATE) before it sends anything.
      const held = await holdRows('SELECT id FROM deliveries WHERE email = ANY(?) FOR UPDATE', [emails]);
      const env = { SMTP_URL: sink.url, MAIL_RATE_PER_SECOND: '0' };
      await crashLoop('mail-worker', env, queue, held.pid);

      await start('mail-worker', env);
      await held.trx.rollback();
      await waitFor(async () => (await drained(queue)) && sink.received.length >= emails.length, { what: 'every invitation sent', timeoutMs: 60_000 });
      Object.assign(tally, await auditEmails(gw.db, sink, emails));
      tally.note = `killed ${KILLS} times holding jobs; nothing was sent before the lock was released`;
      tally.save();
      expect(tally.lost).toBe(0);
      expect(tally.duplicated).toBe(0);
      expect(await queue.getFailedCount()).toBe(0);
    });
  });
});
