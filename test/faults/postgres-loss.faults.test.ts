import { Queue } from 'bullmq';
import { smartLinkWorker } from '../../services/smart-link-worker/smart-link.worker';
import { createDb, type Knex } from '../../shared/db/knex';
import { extractionFinishedChannel, extractionJob } from '../../shared/queues/extraction.job';
import { mailJob } from '../../shared/queues/mail.job';
import { closeRedis, createRedis } from '../../shared/queues/redis';
import { smartLinkJob } from '../../shared/queues/smart-link.job';
import type { ApiResponse } from '../helpers/api-client';
import { FaultTally } from '../helpers/fault-summary';
import { startGateway, testEnv, type TestGateway, type TestTeam } from '../helpers/gateway';
import type { Spawned } from '../helpers/processes';
import { crash, drained, isolatedPrefix, logLines, spawnWorker } from '../helpers/service-processes';
import { type SinkAnswer, type SmtpSink, startSmtpSink } from '../helpers/smtp';
import { TcpProxy } from '../helpers/tcp-proxy';
import { waitFor } from '../helpers/wait';
import { startWorker } from '../helpers/workers';
import { newLink, submitForm } from '../smart-links/helpers';
import { auditEmails, auditSubmissions } from './fault-checks';

/**
 * Postgres taken away from one service at a time: a TCP proxy between the service and
 * Postgres drops every open connection and refuses new ones, while the test itself (and
 * every other test) keeps its own direct connection.
 */
jest.setTimeout(120_000);

// One queue prefix per test: the first test's in-process smart-link worker (with a direct
// Postgres) must not take the jobs the second test's workers are meant to wait on.
const apiPrefix = isolatedPrefix('pg_loss_api');
const workersPrefix = isolatedPrefix('pg_loss_workers');
const SERVICE_UNAVAILABLE = { message: 'Service temporarily unavailable.' };

/** A proxy to the run's Postgres, and the database URL that goes through it. */
async function proxiedPostgres() {
  const pg = new URL(testEnv().DATABASE_URL as string);
  const proxy = await TcpProxy.start({ host: pg.hostname, port: Number(pg.port || 5432) });
  pg.host = `127.0.0.1:${proxy.port}`;
  return { proxy, url: pg.toString() };
}

let db: Knex; // the test's own, direct connection
const procs: Spawned[] = [];
const proxies: TcpProxy[] = [];
const closers: Array<() => Promise<void>> = [];

beforeAll(() => {
  db = createDb(testEnv().DATABASE_URL as string, { poolMax: 2 });
});
afterAll(async () => {
  for (const p of procs) await crash(p);
  for (const close of closers.reverse()) await close();
  for (const proxy of proxies) await proxy.cut();
  await db.destroy();
});

describe('the gateway API', () => {
  it('answers 503 with Retry-After while its Postgres is cut (never a 500, never a hang), and recovers by itself', async () => {
    const tally = new FaultTally('4a. Postgres cut under the gateway API', 'request');
    const { proxy, url } = await proxiedPostgres();
    proxies.push(proxy);
    const gw: TestGateway = await startGateway({ DATABASE_URL: url, QUEUE_PREFIX: apiPrefix });
    closers.push(() => gw.close());
    const worker = await startWorker(smartLinkWorker, { QUEUE_PREFIX: apiPrefix });
    closers.push(() => worker.close());

    const team: TestTeam = await gw.newTeam({ plan: 'unlimited' });
    const { link, calendar: cal } = await newLink(gw, team);
    const { link: coldLink } = await newLink(gw, team, {}, cal);
    const evt = (await team.api.post(`/api/calendars/${cal.public_id}/events`, { title: 'Kept', date_start: '2030-07-01 10:00', date_end: '2030-07-01 11:00', timezone: 'UTC' })).body.data;
    const accepted = new Map<string, string>(); // submissions: sls id → title
    const created: string[] = []; // titles of events created with a 200
    const refusedCreates: string[] = [];
    // The link is in the gateway's cache once it has taken a submission.
    const warm = await submitForm(link.url, { title: 'Warm-up', start: '2030-07-02 10:00' });
    accepted.set(warm.body.data.id, 'Warm-up');

    // Every kind of request the API serves, each checked against /docs.openapi.
    let n = 0;
    const requests = (): Array<{ name: string; send: () => Promise<ApiResponse | { status: number; body: unknown; headers: Headers }> }> => {
      const i = n++;
      const title = `PG api ${i}`;
      const create = async () => {
        const res = await team.api.post('/api/events', { title, start: '2030-07-03 10:00' });
        (res.status === 200 ? created : refusedCreates).push(title);
        return res;
      };
      const submit = async () => {
        const res = await submitForm(link.url, { title: `PG submission ${i}`, start: '2030-07-04 10:00' });
        if (res.status === 202) accepted.set(res.body.data.id, `PG submission ${i}`);
        return res;
      };
      return [
        { name: 'account', send: () => team.api.get('/api/account') },
        { name: 'calendars', send: () => team.api.get('/api/calendars') },
        { name: 'events list', send: () => team.api.get('/api/events?range=upcoming') },
        { name: 'event create', send: create },
        { name: 'event update', send: () => team.api.put(`/api/calendars/${cal.public_id}/events/${evt.public_id}`, { title: 'Kept', date_start: '2030-07-01 10:00', date_end: '2030-07-01 11:00', timezone: 'UTC' }) },
        { name: 'invite', send: () => team.api.post(`/api/calendars/${cal.public_id}/events/${evt.public_id}/invites`, { invitees: [{ email: `pg-api-${i}@example.test` }] }) },
        { name: 'extract', send: () => team.api.post('/api/events/extract', { text: 'Lunch with Sam next Tuesday at 1pm' }) },
        { name: 'smart links', send: () => team.api.get('/api/smart-links') },
        { name: 'submission, link cached', send: submit },
        { name: 'submission, link not cached', send: () => submitForm(coldLink.url, { title: `Cold ${i}`, start: '2030-07-05 10:00' }) },
        { name: 'event page', send: () => fetch(`${gw.baseUrl}/e/${evt.uid}`).then(async (r) => ({ status: r.status, headers: r.headers, body: await r.text() })) },
        { name: 'calendar feed', send: () => fetch(`${gw.baseUrl}/c/${cal.uid}.ics`).then(async (r) => ({ status: r.status, headers: r.headers, body: await r.text() })) },
      ];
    };
    const round = async (clients: number) => {
      const answers: Array<{ name: string; status: number | null; body: unknown; retryAfter: string | null }> = [];
      await Promise.all(
        Array.from({ length: clients }, async () => {
          for (const r of requests()) {
            const res = await tally.send(() => r.send());
            answers.push({ name: r.name, status: res?.status ?? null, body: res?.body, retryAfter: res?.headers.get('retry-after') ?? null });
          }
        }),
      );
      return answers;
    };

    await proxy.cut();
    const during = await round(10);
    const ready = await fetch(`${gw.baseUrl}/readyz`);
    expect(ready.status).toBe(503);
    expect(await ready.json()).toEqual({ status: 'unavailable', checks: { postgres: 'unavailable', redis: 'ok' } });
    for (const a of during) {
      // The ingest path needs no Postgres for a link it knows: the submission is queued.
      if (a.name === 'submission, link cached') {
        expect(a.status).toBe(202);
        continue;
      }
      expect({ name: a.name, status: a.status }).toEqual({ name: a.name, status: 503 });
      expect(Number(a.retryAfter)).toBeGreaterThan(0);
      if (typeof a.body !== 'string') expect(a.body).toEqual(SERVICE_UNAVAILABLE);
    }

    await proxy.restore();
    await waitFor(async () => (await team.api.get('/api/account')).status === 200, { what: 'the gateway to recover', timeoutMs: 30_000 });
    const after = await round(3);
    for (const a of after) expect({ name: a.name, status: a.status }).toEqual({ name: a.name, status: a.name.startsWith('submission') ? 202 : a.name === 'extract' ? 202 : 200 });

    // Nothing refused was stored; everything accepted was, once.
    const titles: string[] = await db('events').where({ team_id: team.teamId }).pluck('title');
    const queue = new Queue(smartLinkJob.queue, { connection: gw.redis, prefix: apiPrefix });
    await waitFor(() => drained(queue), { what: 'the submissions to be written', timeoutMs: 30_000 });
    await queue.close();
    const audit = await auditSubmissions(db, team.teamId, accepted);
    const createdTitles = (await db('events').where({ team_id: team.teamId }).pluck('title')) as string[];
    tally.lost = audit.lost + created.filter((t) => !createdTitles.includes(t)).length;
    tally.duplicated = audit.duplicated;
    tally.note = `while cut: submissions to a link the gateway had cached were queued (202) and written once the worker's Postgres was back; every other request 503`;
    tally.save();
    expect(refusedCreates.filter((t) => titles.includes(t))).toEqual([]);
    expect(tally.lost).toBe(0);
    expect(tally.duplicated).toBe(0);
  });
});

describe('the workers', () => {
  let sink: SmtpSink;
  let answer: SinkAnswer = 'hold';

  it('retry while their Postgres is cut and finish everything once it is back: events, emails, extractions', async () => {
    sink = await startSmtpSink({ answer: () => answer });
    closers.push(() => sink.close());
    const { proxy, url } = await proxiedPostgres();
    proxies.push(proxy);
    // The gateway keeps its Postgres; the three workers go through the proxy.
    // Two attempts per email, 200 ms apart: an outage that spent attempts would fail the
    // emails queued during it for good within a second. Waiting out an outage spends none.
    const gw = await startGateway({ QUEUE_PREFIX: workersPrefix, MAIL_BACKOFF_MS: '200', MAIL_MAX_ATTEMPTS: '2' });
    closers.push(() => gw.close());
    const env = { DATABASE_URL: url, QUEUE_PREFIX: workersPrefix, WORKER_LOCK_MS: '2000', MAIL_BACKOFF_MS: '200', MAIL_MAX_ATTEMPTS: '2', MAIL_RATE_PER_SECOND: '0', MAIL_POOL_SIZE: '2' };
    const [slw, mw, xw] = await Promise.all([
      spawnWorker('smart-link-worker', env),
      spawnWorker('mail-worker', { ...env, SMTP_URL: sink.url }),
      spawnWorker('extraction-worker', env),
    ]);
    procs.push(slw, mw, xw);
    const queues = [smartLinkJob, mailJob, extractionJob].map((c) => new Queue(c.queue, { connection: gw.redis, prefix: workersPrefix }));
    closers.push(async () => {
      for (const q of queues) await q.close();
    });

    // Each finished extraction is announced once, by the worker that wrote it.
    const announced = new Map<string, number>();
    const sub = createRedis(process.env.TEST_REDIS_URL as string, 'worker');
    closers.push(() => closeRedis(sub));
    sub.on('message', (_channel: string, id: string) => announced.set(id, (announced.get(id) ?? 0) + 1));
    await sub.subscribe(extractionFinishedChannel(workersPrefix));

    const team = await gw.newTeam({ plan: 'unlimited' });
    const { link, calendar: cal } = await newLink(gw, team);
    const evt = (await team.api.post(`/api/calendars/${cal.public_id}/events`, { title: 'Offsite', date_start: '2030-08-01 10:00', date_end: '2030-08-01 17:00', timezone: 'UTC' })).body.data;
    const invitePath = `/api/calendars/${cal.public_id}/events/${evt.public_id}/invites`;
    const subTally = new FaultTally('4b. Postgres cut under the workers: smart-link submissions', 'submission');
    const mailTally = new FaultTally('4c. Postgres cut under the workers: emails', 'email');
    const extTally = new FaultTally('4d. Postgres cut under the workers: extractions', 'extraction');

    // 30 invitations, two of them in the middle of their SMTP exchange (the server holds its
    // reply) when Postgres goes.
    const first = Array.from({ length: 30 }, (_, i) => `pg-first-${i}@example.test`);
    expect((await team.api.post(invitePath, { invitees: first.map((email) => ({ email })) })).status).toBe(200);
    mailTally.acceptedItems(first.length);
    await waitFor(() => sink.held.length === 2, { what: 'two messages in flight' });
    await proxy.cut();

    // New work while the workers' Postgres is away: the gateway takes it.
    const accepted = new Map<string, string>();
    for (let i = 0; i < 100; i++) {
      const res = await subTally.send(() => submitForm(link.url, { title: `PG worker ${i}`, start: '2030-08-02 10:00' }));
      if (res?.status === 202) accepted.set(res.body.data.id, `PG worker ${i}`);
    }
    const extractions: string[] = []; // the n-th read `case Rn`
    for (let i = 0; i < 30; i++) {
      const res = await extTally.send(() => team.api.post('/api/events/extract', { text: `Review for case R${i} next Tuesday at 1pm at Cafe Luna`, timezone: 'UTC', reference_date: '2030-01-01T09:00:00Z' }));
      if (res?.status === 202) extractions.push(res.body.data.id);
    }
    const second = Array.from({ length: 10 }, (_, i) => `pg-second-${i}@example.test`);
    expect((await team.api.post(invitePath, { invitees: second.map((email) => ({ email })) })).status).toBe(200);
    mailTally.acceptedItems(second.length);

    // The server now takes every message: those already claimed are delivered, but the
    // worker cannot record them. It must keep trying rather than give up and send them again.
    answer = 'accept';
    for (const held of sink.held) held.answer('accept');
    const waited = (w: typeof slw) => logLines(w, 'Postgres is unavailable; the job waits').length;
    await waitFor(
      () => {
        const state = {
          // more tries than the recorder used to make (4) before the job failed and resent
          recorderAttempts: Math.max(0, ...logLines(mw, 'could not record sent messages yet; retrying').map((l) => Number(l.attempt))),
          smartLinkWaits: waited(slw),
          // more tries than an extraction used to get (3) before it was left pending for good,
          // and than an email gets here (2)
          extractionWaits: waited(xw),
          mailWaits: waited(mw),
          // a worker that died stops logging: say so, with the end of what it wrote
          exited: [slw, mw, xw].filter((w) => w.proc.exitCode !== null || w.proc.signalCode !== null).map((w) => `${w.proc.pid}: ${w.stderr().slice(-300)}`),
        };
        if (state.recorderAttempts >= 5 && state.smartLinkWaits >= 1 && state.extractionWaits >= 3 * 4 && state.mailWaits >= 3) return true;
        throw new Error(JSON.stringify(state)); // says which one is missing if this times out
      },
      { what: 'every worker to find Postgres away and wait', timeoutMs: 60_000 },
    );
    // Waiting spent no attempt.
    const attempts = async (contract: { queue: string }, id: string) => (await queues.find((q) => q.name === contract.queue)?.getJob(id))?.attemptsMade;
    expect(await attempts(extractionJob, extractions[0])).toBe(0);
    const unrecorded = sink.received.length;
    expect(await Promise.all([slw, mw, xw].map((w) => w.readyz()))).toEqual([503, 503, 503]);
    await proxy.restore();

    await waitFor(async () => (await Promise.all(queues.map(drained))).every(Boolean), { what: 'every queue to drain', timeoutMs: 60_000 });
    const subAudit = await auditSubmissions(db, team.teamId, accepted);
    Object.assign(subTally, { lost: subAudit.lost, duplicated: subAudit.duplicated });
    subTally.save();
    Object.assign(mailTally, await auditEmails(db, sink, [...first, ...second]));
    mailTally.note = `${unrecorded} accepted by the SMTP server while the worker could not record them: recorded once Postgres was back, not sent again`;
    mailTally.save();
    const rows: Array<{ uid: string; status: string; result: { title: string } | null }> = await db('extractions').where({ team_id: team.teamId }).select('uid', 'status', 'result');
    const byId = new Map(rows.map((r) => [`ext_${r.uid}`, r]));
    extTally.lost = extractions.filter((id, i) => byId.get(id)?.status !== 'completed' || byId.get(id)?.result?.title !== `Review for case R${i}`).length;
    extTally.duplicated = [...announced.values()].reduce((n, c) => n + c - 1, 0);
    extTally.save();
    expect({ submissions: subAudit, emails: mailTally.figures(), extractions: extTally.lost }).toEqual({
      submissions: { lost: 0, duplicated: 0, unacceptedStored: 0 },
      emails: expect.objectContaining({ lost: 0, duplicated: 0 }),
      extractions: 0,
    });
    for (const q of queues) expect(await q.getFailedCount()).toBe(0);
    // The same worker processes did it all: none needed a restart, and all say they are ready.
    for (const w of [slw, mw, xw]) expect(w.proc.exitCode).toBeNull();
    expect(await Promise.all([slw, mw, xw].map((w) => w.readyz()))).toEqual([200, 200, 200]);
  });
});
