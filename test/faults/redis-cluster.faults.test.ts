import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Queue } from 'bullmq';
import { Webhook } from 'standardwebhooks';
import { ExtractionWaiter } from '../../services/gateway/extractions/extraction-waiter';
import { createLogger } from '../../shared/logging/logger';
import { extractionFinishedChannel, extractionJob, publishExtractionFinished } from '../../shared/queues/extraction.job';
import { mailJob } from '../../shared/queues/mail.job';
import { closeRedis, createRedis, createSubscriber, isCluster, type Redis, type RedisServer } from '../../shared/queues/redis';
import { smartLinkJob } from '../../shared/queues/smart-link.job';
import { ApiClient } from '../helpers/api-client';
import { FaultTally } from '../helpers/fault-summary';
import { startGateway, type TestGateway, type TestTeam } from '../helpers/gateway';
import type { Spawned } from '../helpers/processes';
import { redisClusterUnavailable, TestRedisCluster } from '../helpers/redis-cluster';
import { crash, drained, type GatewayProcess, isolatedDatabase, isolatedPrefix, logLines, scanKeys, spawnGateway, spawnWorker, type WorkerProcess } from '../helpers/service-processes';
import { deliverTo, replyFixture } from '../helpers/inbound';
import { replyAddress } from '../../shared/invites/reply-address';
import { type SmtpSink, startSmtpSink } from '../helpers/smtp';
import { waitFor } from '../helpers/wait';
import { newLink, submitForm } from '../smart-links/helpers';
import { auditEmails, auditSubmissions } from './fault-checks';

/**
 * The service on a real Redis Cluster: three masters on loopback (no replicas, so every
 * slot has one master), two gateway processes and every worker as its own process, all
 * given the cluster's nodes as seeds (REDIS_CLUSTER=true). Smart-link floods, invitations,
 * extractions (with `?wait=`), webhook deliveries, calendar replies through the inbound-mail
 * service, rate limits counted across both gateways
 * and cache invalidations from one gateway to the other go through it; then a master is killed and
 * started again under load. Nothing accepted is lost or done twice, and every key the
 * service wrote is under its prefix, in the one slot its hash tag names.
 */
jest.setTimeout(240_000);

const skipped = redisClusterUnavailable();
if (skipped) process.stderr.write(`\nRedis Cluster fault tests skipped: ${skipped}\n`);
const describeCluster = skipped ? describe.skip : describe;

const prefix = isolatedPrefix('cluster');
const METRICS_TOKEN = 'cluster-test-metrics-token';

describeCluster(`on a Redis Cluster of three masters${skipped ? ` (skipped: ${skipped})` : ''}`, () => {
  let cluster: TestRedisCluster;
  let sink: SmtpSink;
  /** In-process, on the cluster too: Postgres for the checks, teams, the API document. */
  let gw: TestGateway;
  let a: GatewayProcess;
  let b: GatewayProcess;
  let workers: WorkerProcess[];
  const procs: Spawned[] = [];
  /** The test's own connection to the cluster, to look at the queues. */
  let redis: Redis;
  let queues: { submissions: Queue; emails: Queue; extractions: Queue };
  /** Every key written on the cluster from before the services start. */
  let written: Awaited<ReturnType<TestRedisCluster['recordKeys']>>;

  beforeAll(async () => {
    [cluster, sink] = await Promise.all([TestRedisCluster.start({ masters: 3, nodeTimeoutMs: 1000 }), startSmtpSink()]);
    written = await cluster.recordKeys();
    const env = {
      ...cluster.env(),
      QUEUE_PREFIX: prefix,
      WORKER_LOCK_MS: '2000',
      MAIL_BACKOFF_MS: '200',
      RSVP_RATE_PER_10_MINUTES: '5',
      METRICS_TOKEN,
    };
    gw = await startGateway(env);
    [a, b] = await Promise.all([spawnGateway(env), spawnGateway(env)]);
    procs.push(a, b);
    workers = await Promise.all([
      spawnWorker('smart-link-worker', env),
      spawnWorker('extraction-worker', env),
      spawnWorker('mail-worker', { ...env, SMTP_URL: sink.url }),
    ]);
    procs.push(...workers);
    redis = createRedis({ cluster: cluster.urls }, 'worker');
    queues = {
      submissions: new Queue(smartLinkJob.queue, { connection: redis, prefix }),
      emails: new Queue(mailJob.queue, { connection: redis, prefix }),
      extractions: new Queue(extractionJob.queue, { connection: redis, prefix }),
    };
  });
  afterAll(async () => {
    for (const p of procs) await crash(p);
    await written?.stop();
    for (const q of Object.values(queues ?? {})) await q.close();
    if (redis) await closeRedis(redis);
    await gw?.close();
    await sink?.close();
    await cluster?.stop();
  });

  /** The team's client on one gateway process (every answer still checked against the API document). */
  const via = (gateway: GatewayProcess, team: TestTeam | null) => new ApiClient(gateway.baseUrl, team?.token ?? null, gw.conformance);
  const allDrained = async () => (await drained(queues.submissions)) && (await drained(queues.emails)) && (await drained(queues.extractions));
  const title = (s: string) => `<title>${s}`;

  it('starts every process against the cluster: each is ready, and the queues are measured', async () => {
    for (const g of [a, b]) {
      const ready = await fetch(`${g.baseUrl}/readyz`);
      expect([ready.status, await ready.json()]).toEqual([200, { status: 'ok', checks: { postgres: 'ok', redis: 'ok' } }]);
      const metrics = await fetch(`${g.baseUrl}/metrics`, { headers: { Authorization: `Bearer ${METRICS_TOKEN}` } }).then((r) => r.text());
      expect(metrics).toMatch(/^calendar_queue_jobs\{queue="smart-link-submissions",state="waiting",[^}]*\} \d+$/m);
    }
    for (const w of workers) expect(await w.readyz()).toBe(200);
  });

  it('a smart-link flood through two gateways: every 202 is one event, a repeated delivery key queues nothing', async () => {
    const tally = new FaultTally('5a. Redis Cluster: smart-link flood through two gateways', 'submission');
    const team = await gw.newTeam({ plan: 'unlimited' });
    const { link } = await newLink(gw, team);
    const urls = [a, b].map((g) => `${g.baseUrl}/s/${link.key}`);
    const FLOOD = 1500;
    const KEYED = 100;
    const accepted = new Map<string, string>(); // sls id → title
    const keyedIds = new Map<string, Set<string>>(); // delivery key → the ids it was answered with
    let next = 0;
    const sender = async (n: number) => {
      while (next < FLOOD + KEYED) {
        const i = next++;
        const url = urls[(i + n) % 2];
        if (i < FLOOD) {
          const res = await tally.send(() => submitForm(url, { title: `Cluster flood ${i}`, start: '2030-07-01 10:00', duration: '30' }));
          if (res?.status === 202) accepted.set(res.body.data.id as string, `Cluster flood ${i}`);
          continue;
        }
        // A webhook's delivery, sent twice, once to each gateway: one submission.
        const key = `delivery-${i}`;
        for (const target of urls) {
          const res = await tally.send(() => submitForm(target, { title: `Cluster keyed ${i}`, start: '2030-07-02 10:00' }, { 'Idempotency-Key': key }));
          if (res?.status !== 202) continue;
          accepted.set(res.body.data.id as string, `Cluster keyed ${i}`);
          keyedIds.set(key, (keyedIds.get(key) ?? new Set()).add(res.body.data.id as string));
        }
      }
    };
    const flood = Promise.all(Array.from({ length: 40 }, (_, n) => sender(n)));
    // While it runs: the queued listing reads job payloads in pipelines, on the cluster.
    await waitFor(() => accepted.size >= 200, { what: 'the flood under way', timeoutMs: 60_000 });
    for (const g of [a, b]) expect((await via(g, team).get(`/api/smart-links/${link.id}/submissions?status=queued`)).status).toBe(200);
    await flood;
    expect(tally.accepted).toBe(FLOOD + 2 * KEYED);
    expect(tally.unanswered).toBe(0);
    expect([...keyedIds.values()].every((ids) => ids.size === 1)).toBe(true);

    await waitFor(() => drained(queues.submissions), { what: 'the submissions to drain', timeoutMs: 120_000 });
    const audit = await auditSubmissions(gw.db, team.teamId, accepted);
    Object.assign(tally, { lost: audit.lost, duplicated: audit.duplicated });
    tally.note = `${FLOOD} form submissions and ${KEYED} delivery keys each sent to both gateways (${KEYED} submissions), ${accepted.size} distinct ids`;
    tally.save();
    expect(audit).toEqual({ lost: 0, duplicated: 0, unacceptedStored: 0 });
    expect(await queues.submissions.getFailedCount()).toBe(0);

    // A form that lands on the calendar platform waits for its job through QueueEvents
    // (a blocking stream read on the cluster): 303 to the event's platform link.
    for (const g of [a, b]) {
      const res = await fetch(`${g.baseUrl}/s/${link.key}/google`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ title: `Cluster landing ${g.port}`, start: '2030-07-03 10:00' }).toString(),
        redirect: 'manual',
      });
      expect(res.status).toBe(303);
      expect(res.headers.get('location')).toMatch(new RegExp(`^${g.baseUrl}/e/[0-9A-Za-z]+/google$`));
    }
  });

  it('invitations through both gateways: every one sent once, to a real SMTP server', async () => {
    const tally = new FaultTally('5b. Redis Cluster: invitations through two gateways', 'invitation (1 email)');
    const team = await gw.newTeam();
    const cal = (await team.api.post('/api/calendars', { name: 'Cluster', timezone: 'UTC' })).body.data;
    const evt = (await team.api.post(`/api/calendars/${cal.public_id}/events`, { title: 'Cluster review', date_start: '2030-08-01 09:00', date_end: '2030-08-01 10:00', timezone: 'UTC' })).body
      .data;
    const emails = Array.from({ length: 60 }, (_, i) => `cluster${i}@example.test`);
    const invited: string[] = [];
    let next = 0;
    const inviter = async (n: number) => {
      while (next < emails.length) {
        const email = emails[next++];
        const res = await tally.send(() => via([a, b][n % 2], team).post(`/api/calendars/${cal.public_id}/events/${evt.public_id}/invites`, { invitees: [{ email }] }));
        if (res?.status === 200) invited.push(email);
      }
    };
    await Promise.all(Array.from({ length: 6 }, (_, n) => inviter(n)));
    expect(invited).toHaveLength(emails.length);
    await waitFor(async () => (await drained(queues.emails)) && emails.every((e) => sink.for(e).length > 0), { what: 'every invitation sent', timeoutMs: 60_000 });
    Object.assign(tally, await auditEmails(gw.db, sink, invited));
    tally.save();
    expect([tally.lost, tally.duplicated]).toEqual([0, 0]);
    for (const email of emails) expect(sink.for(email)[0].calendar).toContain('METHOD:REQUEST');
    expect(await queues.emails.getFailedCount()).toBe(0);
  });

  it('extractions: `?wait=` answers with the result, each announced once over pub/sub', async () => {
    const tally = new FaultTally('5c. Redis Cluster: extractions with ?wait= through two gateways', 'extraction');
    const team = await gw.newTeam({ plan: 'unlimited' });
    const announced = new Map<string, number>();
    const sub: RedisServer = createSubscriber({ cluster: cluster.urls }, 'test-extractions');
    sub.on('error', () => undefined);
    sub.on('message', (_channel: string, id: string) => announced.set(id, (announced.get(id) ?? 0) + 1));
    try {
      await sub.subscribe(extractionFinishedChannel(prefix));
      const TOTAL = 30;
      const answers = await Promise.all(
        Array.from({ length: TOTAL }, (_, i) =>
          tally.send(() =>
            via([a, b][i % 2], team).post('/api/events/extract?wait=10', {
              text: `Cluster case C${i} next Tuesday at 1pm at Cafe Luna`,
              timezone: 'UTC',
              reference_date: '2030-01-01T09:00:00Z',
            }),
          ),
        ),
      );
      const done = answers.filter((res) => res?.status === 200 && res.body.data.status === 'completed');
      await waitFor(() => announced.size === TOTAL, { what: 'every extraction announced' });
      tally.lost = TOTAL - done.filter((res) => res?.body.data.result.location === 'Cafe Luna').length;
      tally.duplicated = [...announced.values()].reduce((n, c) => n + c - 1, 0);
      tally.note = `${done.length} of ${TOTAL} answered 200 with the result within their wait`;
      tally.save();
      expect(answers.map((res) => res?.status)).toEqual(Array(TOTAL).fill(200));
      expect([tally.lost, tally.duplicated]).toEqual([0, 0]);
      expect(new Set(done.map((res) => res?.body.data.result.title))).toEqual(new Set(Array.from({ length: TOTAL }, (_, i) => `Cluster case C${i}`)));
    } finally {
      await closeRedis(sub);
    }

    // The waiter itself: a wait far longer than the test may take ends only when the
    // announcement published on the cluster wakes it.
    const waiter = new ExtractionWaiter({ cluster: cluster.urls }, prefix, createLogger('cluster-waiter', 'silent'));
    try {
      let reads = 0;
      const waiting = waiter.wait('ext_0000000000000001', 600_000, async () => (++reads === 1 ? null : 'finished'));
      await waitFor(() => reads === 1, { what: 'the wait to subscribe and read once' });
      await publishExtractionFinished(gw.redis, prefix, 'ext_0000000000000001', createLogger('cluster-publisher', 'silent'));
      expect(await waiting).toBe('finished');
    } finally {
      await waiter.close();
    }
  });

  it('rate limits are counted once across both gateways: plan limits, RSVPs and access codes per address', async () => {
    const tally = new FaultTally('5d. Redis Cluster: rate limits across two gateways', 'request');
    const statuses = async (n: number, send: (i: number) => Promise<{ status: number }>) => {
      const out: number[] = [];
      for (let i = 0; i < n; i++) out.push((await tally.send(() => send(i)))?.status ?? 0);
      return out;
    };
    const expected = (ok: number, okStatus: number, refused: number) => [...Array(ok).fill(okStatus), ...Array(refused).fill(429)];

    // The plan's API limit per token: 20 a minute, whichever gateway counts them.
    const api = await gw.newTeam({ limits: { api_per_minute_token: 20, api_per_minute_team: null } });
    expect(await statuses(30, (i) => via([a, b][i % 2], api).get('/api/calendars'))).toEqual(expected(20, 200, 10));

    // The plan's smart-link limit per link: 15 a minute; the accepted ones become events.
    const linked = await gw.newTeam({ limits: { smart_link_per_minute: 15 } });
    const { link } = await newLink(gw, linked);
    const accepted = new Map<string, string>();
    const sent = await statuses(25, async (i) => {
      const res = await submitForm(`${[a, b][i % 2].baseUrl}/s/${link.key}`, { title: `Limited ${i}`, start: '2030-07-05 10:00' });
      if (res.status === 202) accepted.set(res.body.data.id as string, `Limited ${i}`);
      return res;
    });
    expect(sent).toEqual(expected(15, 202, 10));

    // RSVPs per address (RSVP_RATE_PER_10_MINUTES=5 here), across events and gateways.
    const host = await gw.newTeam();
    const cal = (await host.api.post('/api/calendars', { name: 'Limits', timezone: 'UTC' })).body.data;
    const create = async (extra: Record<string, unknown>) =>
      (await host.api.post(`/api/calendars/${cal.public_id}/events`, { title: 'Limited', date_start: '2030-09-01 10:00', date_end: '2030-09-01 11:00', timezone: 'UTC', ...extra })).body
        .data as { uid: string };
    const [open, other] = [await create({ has_rsvp: true }), await create({ has_rsvp: true })];
    const rsvp = (i: number) =>
      via([a, b][i % 2], null).post(`/e/${(i < 4 ? open : other).uid}/rsvp`, { name: `Guest ${i}`, email: `guest${i}@example.test`, answer: 'yes' });
    expect(await statuses(8, rsvp)).toEqual(expected(5, 202, 3));

    // Wrong access codes per event and address: five, then 429 even for the right one.
    const locked = await create({ access_code: 'sesame-42' });
    const unlock = (i: number) => via([a, b][i % 2], null).post(`/e/${locked.uid}/unlock`, { access_code: i < 5 ? `wrong-${i}` : 'sesame-42' });
    expect(await statuses(7, unlock)).toEqual([...Array(5).fill(403), 429, 429]);

    await waitFor(() => drained(queues.submissions), { what: 'the limited link drained', timeoutMs: 60_000 });
    const audit = await auditSubmissions(gw.db, linked.teamId, accepted);
    Object.assign(tally, { lost: audit.lost, duplicated: audit.duplicated });
    tally.note = 'API 20/min per token, a link 15/min, RSVPs 5 per address, 5 wrong access codes per event and address: each counted once for both gateways';
    tally.save();
    expect(audit).toEqual({ lost: 0, duplicated: 0, unacceptedStored: 0 });
  });

  it("a change through one gateway is seen on the other's cached pages and feeds", async () => {
    const team = await gw.newTeam();
    const viaA = via(a, team);
    const cal = (await viaA.post('/api/calendars', { name: 'Cached', timezone: 'UTC' })).body.data;
    const body = { title: 'Before', date_start: '2030-10-01 10:00', date_end: '2030-10-01 11:00', timezone: 'UTC' };
    const evt = (await viaA.post(`/api/calendars/${cal.public_id}/events`, body)).body.data;
    const page = () => fetch(`${b.baseUrl}/e/${evt.uid}`).then((r) => r.text());
    const feed = () => fetch(`${b.baseUrl}/c/${cal.uid}.ics`).then((r) => r.text());
    expect(await page()).toContain(title('Before'));
    expect(await feed()).toContain('SUMMARY:Before');

    // Changed behind the service's back: the other gateway answers from its caches, which
    // its subscription on the cluster keeps live.
    await gw.db('events').where({ uid: evt.uid }).update({ title: 'Behind' });
    expect(await page()).toContain(title('Before'));
    expect(await feed()).toContain('SUMMARY:Before');

    // Changed through the first gateway: its invalidation reaches the second (within the
    // 10 s a wait allows, where the caches would keep the event 30 s and the feed 10 minutes).
    await viaA.put(`/api/calendars/${cal.public_id}/events/${evt.public_id}`, { ...body, title: 'After' });
    await waitFor(async () => (await page()).includes(title('After')), { what: 'the page on the other gateway' });
    await waitFor(async () => (await feed()).includes('SUMMARY:After'), { what: 'the feed on the other gateway' });

    // A smart link switched off through one gateway stops taking submissions on the other.
    const { link, calendar } = await newLink(gw, team);
    expect((await submitForm(`${b.baseUrl}/s/${link.key}`, { title: 'Cached link', start: '2030-10-02 10:00' })).status).toBe(202);
    expect((await viaA.put(`/api/smart-links/${link.id}`, { name: 'Form', calendar: calendar.public_id, is_active: false })).status).toBe(200);
    await waitFor(async () => (await submitForm(`${b.baseUrl}/s/${link.key}`, { title: 'Cached link', start: '2030-10-02 10:00' })).status === 404, {
      what: 'the link switched off on the other gateway',
    });
  });

  it('webhooks: the webhook worker on the cluster delivers every event once, signed', async () => {
    const tally = new FaultTally('5g. Redis Cluster: webhook deliveries through the webhook worker', 'delivery');
    // A database of its own, so this worker relays only this test's outbox (the webhook
    // tests' workers share the run's database); the queue is on the cluster as every other.
    const database = await isolatedDatabase('cluster_webhooks');
    const received: Array<{ headers: http.IncomingHttpHeaders; body: string }> = [];
    const receiver = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        received.push({ headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
        res.writeHead(200).end('ok');
      });
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    const env = { ...cluster.env(), QUEUE_PREFIX: prefix, DATABASE_URL: database.url, WEBHOOK_ALLOW_HTTP: 'true', WEBHOOK_ALLOWED_NETWORKS: '127.0.0.1/32' };
    const hooks = await startGateway(env);
    const worker = await spawnWorker('webhook-worker', env);
    procs.push(worker);
    try {
      const team = await hooks.newTeam();
      const url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/in`;
      const hook = (await team.api.post('/api/webhooks', { url, event_types: ['event.created'] })).body.data as { id: string; secret: string };
      const cal = (await team.api.post('/api/calendars', { name: 'Hooks', timezone: 'UTC' })).body.data;
      const titles = new Set<string>();
      for (let i = 0; i < 40; i++) {
        const res = await team.api.post(`/api/calendars/${cal.public_id}/events`, { title: `Hooked ${i}`, date_start: '2031-01-01 10:00', date_end: '2031-01-01 11:00', timezone: 'UTC' });
        tally.count(res);
        titles.add(`Hooked ${i}`);
      }
      await waitFor(() => received.length >= titles.size, { what: 'every delivery to arrive', timeoutMs: 60_000 });
      // A moment more: a delivery made twice would arrive now.
      await new Promise((resolve) => setTimeout(resolve, 1000));
      const verifier = new Webhook(hook.secret);
      const seen = received.map((r) => (verifier.verify(r.body, r.headers as Record<string, string>) as { data: { title: string } }).data.title);
      const ids = new Set(received.map((r) => r.headers['webhook-id']));
      Object.assign(tally, { lost: [...titles].filter((t) => !seen.includes(t)).length, duplicated: received.length - ids.size });
      tally.save();
      expect([tally.lost, tally.duplicated, new Set(seen)]).toEqual([0, 0, titles]);
      expect(await worker.readyz()).toBe(200);
    } finally {
      await crash(worker);
      receiver.closeAllConnections();
      await new Promise((resolve) => receiver.close(resolve));
      await hooks.close();
      await database.drop();
    }
  });

  it("replies: the inbound-mail service on the cluster records each invitee's answer once", async () => {
    const tally = new FaultTally('5h. Redis Cluster: calendar replies through the inbound-mail service', 'reply');
    const DOMAIN = 'replies.cluster.example.test';
    const inbound = await spawnWorker('inbound-mail', { ...cluster.env(), QUEUE_PREFIX: prefix, REPLY_DOMAIN: DOMAIN, INBOUND_SMTP_PORT: '0', INBOUND_SMTP_HOST: '127.0.0.1' });
    procs.push(inbound);
    try {
      const smtpPort = Number(logLines(inbound, 'inbound SMTP listening')[0]?.smtpPort);
      const team = await gw.newTeam();
      const cal = (await team.api.post('/api/calendars', { name: 'Replies', timezone: 'UTC' })).body.data;
      const evt = (await team.api.post(`/api/calendars/${cal.public_id}/events`, { title: 'Answered', date_start: '2031-02-01 10:00', date_end: '2031-02-01 11:00', timezone: 'UTC' })).body.data;
      const emails = Array.from({ length: 10 }, (_, i) => `replier-${i}@guests.example.test`);
      expect((await team.api.post(`/api/calendars/${cal.public_id}/events/${evt.public_id}/invites`, { invitees: emails.map((email) => ({ email })) })).status).toBe(200);
      const rows = (await gw.db('invitees as i').join('events as e', 'e.id', 'i.event_id').where('e.uid', evt.uid).select('i.id', 'i.uid', 'i.email')) as Array<{ id: number; uid: string; email: string }>;
      for (const [i, row] of rows.entries()) {
        const to = replyAddress(gw.config.appKey, DOMAIN, { inviteeId: Number(row.id), inviteeUid: row.uid, eventUid: evt.uid });
        const raw = replyFixture(i % 2 ? 'thunderbird-decline.eml' : 'thunderbird-accept.eml', { REPLY_ADDRESS: to, ATTENDEE_EMAIL: row.email, ATTENDEE_NAME: 'Guest', UID: `evt_${evt.uid}@host`, SEQUENCE: '0' });
        const sent = await deliverTo(smtpPort, to, raw);
        tally.sent++;
        if (sent.ok) tally.accepted++;
        expect([row.email, sent.ok]).toEqual([row.email, true]);
      }
      const answers = await waitFor(async () => {
        const list = (await team.api.get(`/api/calendars/${cal.public_id}/events/${evt.public_id}/invites`)).body.data as Array<{ email: string; response: string | null }>;
        return list.every((r) => r.response !== null) && list;
      }, { what: 'every reply to be recorded', timeoutMs: 60_000 });
      const expected = Object.fromEntries(rows.map((r, i) => [r.email, i % 2 ? 'declined' : 'accepted']));
      expect(Object.fromEntries(answers.map((r) => [r.email, r.response]))).toEqual(expected);
      Object.assign(tally, { lost: 0, duplicated: 0 });
      tally.save();
    } finally {
      await crash(inbound);
    }
  });

  it('a master lost and started again under load: 503s while the cluster is down, never a 2xx for unqueued work, nor a 500', async () => {
    const subTally = new FaultTally('5e. Redis Cluster: a master killed and restarted under load: submissions', 'submission');
    const mailTally = new FaultTally('5f. Redis Cluster: a master killed and restarted under load: invitations', 'invitation (1 email)');
    const team = await gw.newTeam({ plan: 'unlimited' });
    const { link, calendar } = await newLink(gw, team);
    const evt = (await team.api.post(`/api/calendars/${calendar.public_id}/events`, { title: 'Outage', date_start: '2030-11-01 09:00', date_end: '2030-11-01 09:30', timezone: 'UTC' })).body.data;
    // Not the master of the queues' slot: the shard the service uses stays up, and only the
    // cluster's own verdict (CLUSTERDOWN, all slots must be served) stops it.
    const owner = await cluster.ownerOf(prefix);
    const victim = (owner + 1) % 3;

    // A request sent as the master goes, or answered as it comes back (a command is tried
    // again for a second and a half before it fails), may meet either state.
    type Phase = 'before' | 'killing' | 'down' | 'restarting' | 'after';
    let phase: Phase = 'before';
    let stop = false;
    const answers: Array<{ kind: 'submission' | 'invite'; sentIn: Phase; answeredIn: Phase; status: number | null; key: string; body: unknown }> = [];
    const acceptedSubmissions = new Map<string, string>();
    const acceptedInvites: string[] = [];
    let n = 0;
    const submitter = async (i: number) => {
      while (!stop) {
        const sentIn = phase;
        const key = `Outage ${n++}`;
        const res = await subTally.send(() => submitForm(`${[a, b][i % 2].baseUrl}/s/${link.key}`, { title: key, start: '2030-11-02 10:00', duration: '30' }));
        answers.push({ kind: 'submission', sentIn, answeredIn: phase, status: res?.status ?? null, key, body: res?.body });
        if (res?.status === 202) acceptedSubmissions.set(res.body.data.id as string, key);
      }
    };
    let m = 0;
    const inviter = async (i: number) => {
      while (!stop) {
        const sentIn = phase;
        const email = `outage${m++}@example.test`;
        const res = await mailTally.send(() =>
          via([a, b][i % 2], team).post(`/api/calendars/${calendar.public_id}/events/${evt.public_id}/invites`, { invitees: [{ email }] }, { unchecked: true }),
        );
        answers.push({ kind: 'invite', sentIn, answeredIn: phase, status: res?.status ?? null, key: email, body: res?.body });
        if (res?.status === 200) acceptedInvites.push(email);
      }
    };
    const down = (x: (typeof answers)[number]) => x.sentIn === 'down' && x.answeredIn === 'down';
    const count = (kind: string, p: Phase, status?: number) =>
      answers.filter((x) => x.kind === kind && x.sentIn === p && x.answeredIn === p && (status === undefined || x.status === status)).length;
    const load = Promise.all([...Array.from({ length: 6 }, (_, i) => submitter(i)), inviter(0), inviter(1)]);
    const readiness = () => Promise.all([...[a, b].map(async (g) => (await fetch(`${g.baseUrl}/readyz`)).status), ...workers.map((w) => w.readyz())]);
    try {
      await waitFor(() => count('submission', 'before', 202) >= 50 && count('invite', 'before', 200) >= 3, { what: 'work accepted before the kill', timeoutMs: 60_000 });
      phase = 'killing';
      await cluster.kill(victim);
      await cluster.waitUntilFailed();
      phase = 'down';
      await waitFor(() => count('submission', 'down') >= 20 && count('invite', 'down') >= 3, { what: 'answers while the cluster is down', timeoutMs: 60_000 });
      // Readiness asks the queues' slot, not any node: a PING would still be answered.
      expect(await readiness()).toEqual([503, 503, 503, 503, 503]);

      phase = 'restarting';
      await cluster.restart(victim);
      await cluster.waitUntilOk();
      phase = 'after';
      await waitFor(() => count('submission', 'after', 202) >= 50 && count('invite', 'after', 200) >= 3, { what: 'the gateways to recover by themselves', timeoutMs: 60_000 });
    } finally {
      stop = true;
      await load;
    }
    await waitFor(async () => (await readiness()).every((s) => s === 200), { what: 'every process ready again', timeoutMs: 30_000 });

    // While down: 503 in the documented shape; at any time: the work accepted, or a 503.
    for (const x of answers.filter(down)) expect([x.kind, x.status, x.body]).toEqual([x.kind, 503, { message: 'Service temporarily unavailable.' }]);
    expect(subTally.unanswered + mailTally.unanswered).toBe(0);
    expect(Object.keys({ ...subTally.rejected, ...mailTally.rejected })).toEqual(['503']);

    await waitFor(allDrained, { what: 'every queue to drain', timeoutMs: 120_000 });
    const subAudit = await auditSubmissions(gw.db, team.teamId, acceptedSubmissions);
    Object.assign(subTally, { lost: subAudit.lost, duplicated: subAudit.duplicated });
    subTally.note = `${count('submission', 'down')} answered 503 while the cluster was down; ${subAudit.unacceptedStored} answered 503 as it went down had been stored and became events (allowed, once)`;
    subTally.save();
    await waitFor(() => acceptedInvites.every((e) => sink.for(e).length > 0), { what: 'every accepted invitation sent', timeoutMs: 60_000 });
    const mailAudit = await auditEmails(gw.db, sink, acceptedInvites);
    Object.assign(mailTally, mailAudit);
    mailTally.note = `${count('invite', 'down')} answered 503 while the cluster was down`;
    mailTally.save();
    expect(subAudit).toEqual({ lost: 0, duplicated: 0, unacceptedStored: expect.any(Number) });
    expect(mailAudit).toEqual({ lost: 0, duplicated: 0 });
    // Invitations refused while it was down left nothing behind (their transactions rolled back).
    const refused = new Set(answers.filter((x) => x.kind === 'invite' && down(x)).map((x) => x.key));
    const stored: string[] = await gw.db('invitees').where({ event_id: gw.db('events').select('id').where({ uid: evt.uid }) }).pluck('email');
    expect(stored.filter((e) => refused.has(e))).toEqual([]);
    expect(await queues.submissions.getFailedCount()).toBe(0);
    expect(await queues.emails.getFailedCount()).toBe(0);
    for (const p of procs) expect(p.proc.exitCode).toBeNull();
  });

  it('every key the service wrote is under its prefix, in the one slot its hash tag names', async () => {
    // What is there now, and what was written and is gone (a group's job once done, the
    // send-rate counter of a past second).
    const keys = new Set(written.keys);
    for await (const batch of scanKeys(redis, '*')) for (const key of batch.keys) keys.add(key);
    expect([...keys].filter((k) => !k.startsWith(`${prefix}:`))).toEqual([]);
    for (const part of [':rl:api-token:', ':rl:smart-link:', ':rl:rsvp:', ':rl:unlock:', ':mail-rate:', `:${smartLinkJob.queue}:`, `:${mailJob.queue}:`, `:${extractionJob.queue}:`]) {
      expect([part, [...keys].some((k) => k.includes(part))]).toEqual([part, true]);
    }
    // CLUSTER KEYSLOT of every one of them is the prefix's.
    const node = isCluster(redis) ? redis.nodes('master')[0] : redis;
    const slots = new Set<number>();
    const all = [...keys];
    for (let i = 0; i < all.length; i += 1000) {
      const pipeline = node.pipeline();
      for (const key of all.slice(i, i + 1000)) pipeline.call('CLUSTER', 'KEYSLOT', key);
      for (const [err, slot] of (await pipeline.exec()) ?? []) slots.add(err ? -1 : (slot as number));
    }
    const slot = Number(await cluster.cli('any', 'CLUSTER', 'KEYSLOT', prefix));
    expect([...slots]).toEqual([slot]);
    // And the master of that slot holds every key there is.
    const owner = await cluster.ownerOf(prefix);
    const sizes = await Promise.all([0, 1, 2].map((i) => cluster.cli(i, 'DBSIZE')));
    expect(sizes.map(Number)).toEqual([0, 1, 2].map((i) => (i === owner ? Number(sizes[owner]) : 0)));
    expect(Number(await cluster.cli(owner, 'CLUSTER', 'COUNTKEYSINSLOT', String(slot)))).toBe(Number(sizes[owner]));
  });
});
