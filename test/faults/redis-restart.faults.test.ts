import { Queue } from 'bullmq';
import { mailJob } from '../../shared/queues/mail.job';
import { closeRedis, createRedis } from '../../shared/queues/redis';
import { smartLinkJob } from '../../shared/queues/smart-link.job';
import { FaultTally } from '../helpers/fault-summary';
import { startGateway, type TestGateway } from '../helpers/gateway';
import type { Spawned } from '../helpers/processes';
import { TestRedisServer } from '../helpers/redis-server';
import { crash, drained, isolatedPrefix, spawnWorker } from '../helpers/service-processes';
import { type SmtpSink, startSmtpSink } from '../helpers/smtp';
import { waitFor } from '../helpers/wait';
import { newLink, submitForm } from '../smart-links/helpers';
import { auditEmails, auditSubmissions } from './fault-checks';

/**
 * Redis killed (SIGKILL) and started again under load, with the gateway and the
 * smart-link and mail workers running against it the whole time.
 *
 * The test-owned Redis runs with AOF, fsync on every write (appendonly yes, appendfsync
 * always), as production Redis does (docker-compose, infra/): a job stored before the
 * crash, which its request answered 202 or 200 for, is still there after the restart.
 * Without AOF a crash would empty the queues; that is the durability Redis persistence
 * gives, not something the service could make up for.
 */
jest.setTimeout(120_000);

type Phase = 'before' | 'killing' | 'down' | 'after';
interface Sent {
  /** The submission's title, the invitee's email. */
  key: string;
  phase: Phase;
  status: number | null;
  body: unknown;
  retryAfter: string | null;
}

let redis: TestRedisServer;
let gw: TestGateway;
let sink: SmtpSink;
const procs: Spawned[] = [];

beforeAll(async () => {
  redis = await TestRedisServer.start();
  sink = await startSmtpSink();
});
afterAll(async () => {
  for (const p of procs) await crash(p);
  await gw?.close();
  await sink.close();
  await redis.stop();
});

it('killed and restarted under load: 503s while down, never a 2xx for unqueued work; gateway and workers recover by themselves', async () => {
  const prefix = isolatedPrefix('redis_restart');
  const env = { REDIS_URL: redis.url, QUEUE_PREFIX: prefix, WORKER_LOCK_MS: '2000', MAIL_BACKOFF_MS: '200' };
  gw = await startGateway(env);
  const [slw, mw] = await Promise.all([spawnWorker('smart-link-worker', env), spawnWorker('mail-worker', { ...env, SMTP_URL: sink.url })]);
  procs.push(slw, mw);

  const team = await gw.newTeam({ plan: 'unlimited' });
  const { link, calendar } = await newLink(gw, team);
  const evt = (await team.api.post(`/api/calendars/${calendar.public_id}/events`, { title: 'Standup', date_start: '2030-06-01 09:00', date_end: '2030-06-01 09:30', timezone: 'UTC' })).body.data;

  // The load: 8 clients sending submissions, 1 inviting one person at a time, each request
  // remembered with the phase it was sent in. A client that has sent its phase's share
  // waits for the next phase, so the run stays small.
  const share: Record<Phase, { submissions: number; invites: number }> = {
    before: { submissions: 150, invites: 6 },
    killing: { submissions: 0, invites: 0 },
    down: { submissions: 50, invites: 5 },
    after: { submissions: 150, invites: 6 },
  };
  let phase: Phase = 'before';
  const signal = () => {
    let resolve!: () => void;
    const promise = new Promise<void>((r) => (resolve = r));
    return { promise, resolve };
  };
  let nextPhase = signal();
  const enter = (p: Phase) => {
    phase = p;
    nextPhase.resolve();
    nextPhase = signal();
  };
  let stop = false;
  const submissions: Sent[] = [];
  const invites: Sent[] = [];
  const acceptedSubmissions = new Map<string, string>(); // sls id → title
  const acceptedInvites: string[] = [];
  const subTally = new FaultTally('3a. Redis restarted under load: smart-link submissions', 'submission');
  const mailTally = new FaultTally('3b. Redis restarted under load: invitations', 'invitation (1 email)');
  const count = (list: Sent[], p: Phase, status?: number) => list.filter((s) => s.phase === p && (status === undefined || s.status === status)).length;
  let n = 0;
  let started: { submissions: number; invites: number; phase: Phase } = { submissions: 0, invites: 0, phase };
  // Before the crash and while Redis is down, a phase's share of requests is sent; after the
  // restart, requests go on until its share has been accepted (the first ones may still
  // meet a gateway that has not reconnected yet).
  const turn = async (kind: 'submissions' | 'invites') => {
    for (;;) {
      if (started.phase !== phase) started = { submissions: 0, invites: 0, phase };
      const done = phase === 'after' ? count(kind === 'submissions' ? submissions : invites, 'after', kind === 'submissions' ? 202 : 200) : started[kind];
      if (stop || done < share[phase][kind]) break;
      await nextPhase.promise;
    }
    started[kind]++;
    return phase;
  };
  const submitter = async () => {
    for (;;) {
      const sentIn = await turn('submissions');
      if (stop) return;
      const title = `Redis ${n++}`;
      const res = await subTally.send(() => submitForm(link.url, { title, start: '2030-06-02 10:00', duration: '30' }));
      submissions.push({ key: title, phase: sentIn, status: res?.status ?? null, body: res?.body, retryAfter: res?.headers.get('retry-after') ?? null });
      if (res?.status === 202) acceptedSubmissions.set(res.body.data.id as string, title);
    }
  };
  let m = 0;
  const inviter = async () => {
    for (;;) {
      const sentIn = await turn('invites');
      if (stop) return;
      const email = `redis${m++}@example.test`;
      const res = await mailTally.send(() =>
        team.api.post(`/api/calendars/${calendar.public_id}/events/${evt.public_id}/invites`, { invitees: [{ email }] }, { unchecked: true }),
      );
      invites.push({ key: email, phase: sentIn, status: res?.status ?? null, body: res?.body, retryAfter: res?.headers.get('retry-after') ?? null });
      if (res?.status === 200) acceptedInvites.push(email);
    }
  };
  const load = Promise.all([...Array.from({ length: 8 }, submitter), inviter()]);
  // For a failure message: what was answered in which phase.
  const byPhase = (list: Sent[]) => list.reduce<Record<string, number>>((o, s) => ({ ...o, [`${s.phase} ${s.status}`]: (o[`${s.phase} ${s.status}`] ?? 0) + 1 }), {});
  const progress = () => JSON.stringify({ phase, emailsReceived: sink.received.length, submissions: byPhase(submissions), invites: byPhase(invites) });

  try {
    // Up: work is accepted and the workers are on it.
    await waitFor(() => count(submissions, 'before') === share.before.submissions && count(invites, 'before') === share.before.invites && sink.received.length > 0, {
      what: 'work accepted and processed before the crash',
      timeoutMs: 30_000,
    });
    enter('killing');
    await redis.kill();
    enter('down');
    await waitFor(() => count(submissions, 'down') === share.down.submissions && count(invites, 'down') === share.down.invites, { what: 'answers while Redis is down', timeoutMs: 30_000 });
    expect((await fetch(`${gw.baseUrl}/readyz`)).status).toBe(503);
    expect([await slw.readyz(), await mw.readyz()]).toEqual([503, 503]);

    await redis.startProcess();
    enter('after');
    // The same gateway and the same worker processes: nothing restarted but Redis. Clients
    // keep sending until the gateway has taken their share again.
    await waitFor(() => count(submissions, 'after', 202) >= share.after.submissions && count(invites, 'after', 200) >= share.after.invites, {
      what: 'the gateway to recover',
      timeoutMs: 30_000,
    });
  } catch (err) {
    throw new Error(`${(err as Error).message}\n${progress()}`, { cause: err });
  } finally {
    stop = true;
    nextPhase.resolve();
    await load;
  }
  expect((await fetch(`${gw.baseUrl}/readyz`)).status).toBe(200);
  await waitFor(async () => (await slw.readyz()) === 200 && (await mw.readyz()) === 200, { what: 'the workers to be ready again', timeoutMs: 30_000 });

  // While Redis was down: 503 in the documented shape, never a 2xx and never a hang.
  const down = [...submissions, ...invites].filter((s) => s.phase === 'down');
  for (const s of down) {
    expect(s.status).toBe(503);
    expect(s.body).toEqual({ message: 'Service temporarily unavailable.' });
    expect(Number(s.retryAfter)).toBeGreaterThan(0);
  }
  expect(subTally.unanswered + mailTally.unanswered).toBe(0);
  // And at any time, an answer is the work accepted or a 503: never a 500.
  expect(Object.keys({ ...subTally.rejected, ...mailTally.rejected })).toEqual(['503']);

  // Every accepted submission and invitation is done once, by the workers that ran
  // throughout: those accepted after the restart too (no other worker uses this Redis).
  const queueConn = createRedis(redis.url, 'worker');
  const slQueue = new Queue(smartLinkJob.queue, { connection: queueConn, prefix });
  const mailQueue = new Queue(mailJob.queue, { connection: queueConn, prefix });
  try {
    await waitFor(async () => (await drained(slQueue)) && (await drained(mailQueue)), { what: 'both queues to drain', timeoutMs: 60_000 });
    const subAudit = await auditSubmissions(gw.db, team.teamId, acceptedSubmissions);
    Object.assign(subTally, { lost: subAudit.lost, duplicated: subAudit.duplicated });
    const refusedAfter = submissions.filter((s) => s.phase === 'after' && s.status === 503).length;
    subTally.note = `503s: ${count(submissions, 'down')} while Redis was down, ${refusedAfter} after its restart until the gateway had reconnected; ${subAudit.unacceptedStored} answered 503 at the moment of the crash had been stored and became events (allowed, once)`;
    subTally.save();
    const invitees: string[] = await gw.db('invitees').where({ event_id: gw.db('events').select('id').where({ uid: evt.uid }) }).pluck('email');
    const mailAudit = await auditEmails(gw.db, sink, acceptedInvites);
    const extraEmails = invitees.filter((e) => !acceptedInvites.includes(e));
    Object.assign(mailTally, mailAudit);
    mailTally.note = `${extraEmails.length} invitations answered 503 at the moment of the crash had been stored (allowed, once)`;
    mailTally.save();
    expect(subAudit).toEqual({ lost: 0, duplicated: 0, unacceptedStored: expect.any(Number) });
    expect(mailAudit).toEqual({ lost: 0, duplicated: 0 });
    // An invitation refused while Redis was down left nothing behind (its transaction
    // rolled back); only those in flight at the crash itself may have been stored.
    const sentDown = new Set(invites.filter((s) => s.phase === 'down').map((s) => s.key));
    expect(extraEmails.filter((e) => sentDown.has(e))).toEqual([]);
    for (const email of extraEmails) expect(sink.for(email).length).toBeLessThanOrEqual(1);
    expect(await slQueue.getFailedCount()).toBe(0);
    expect(await mailQueue.getFailedCount()).toBe(0);
  } finally {
    await slQueue.close();
    await mailQueue.close();
    await closeRedis(queueConn);
  }
  expect(slw.proc.exitCode).toBeNull();
  expect(mw.proc.exitCode).toBeNull();
});
