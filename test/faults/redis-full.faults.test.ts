import { Queue } from 'bullmq';
import { MAX_LINE_BYTES } from '../../shared/logging/logger';
import { closeRedis, createRedis, type RedisServer, warnUnlessNoEviction } from '../../shared/queues/redis';
import { smartLinkJob } from '../../shared/queues/smart-link.job';
import { FaultTally } from '../helpers/fault-summary';
import { startGateway, type TestGateway } from '../helpers/gateway';
import { TestRedisServer } from '../helpers/redis-server';
import { crash, drained, isolatedPrefix, logLines, spawnGateway, spawnWorker, type GatewayProcess, type WorkerProcess } from '../helpers/service-processes';
import { waitFor } from '../helpers/wait';
import { newLink, submitForm } from '../smart-links/helpers';
import { auditSubmissions } from './fault-checks';

/**
 * Redis at its memory limit (maxmemory with noeviction, as production runs it): it answers
 * but refuses every write. Submissions are answered 202 (stored) or 503 with Retry-After,
 * never anything else; readiness says so; no log line carries a payload and the logs stay
 * small; a worker started meanwhile backs off instead of spinning; once Redis has room
 * everything recovers by itself and every 202 becomes one event.
 */
jest.setTimeout(180_000);

const prefix = isolatedPrefix('redis_full');
let redis: TestRedisServer;
let admin: RedisServer;
let setup: TestGateway;
let gateway: GatewayProcess;
let worker: WorkerProcess | undefined;
let queue: Queue;

beforeAll(async () => {
  redis = await TestRedisServer.start();
  admin = createRedis(redis.url, 'worker');
  const env = { REDIS_URL: redis.url, QUEUE_PREFIX: prefix };
  setup = await startGateway(env);
  gateway = await spawnGateway({ ...env, LOG_LEVEL: 'info' });
  queue = new Queue(smartLinkJob.queue, { connection: admin, prefix });
});
afterAll(async () => {
  if (worker) await crash(worker);
  await crash(gateway);
  await queue.close();
  await setup.close();
  await closeRedis(admin);
  await redis.stop();
});

const status = async (url: string) => (await fetch(url)).status;

it('full Redis: only 202 and 503 answers, readiness says so, bounded logs, a worker that waits, nothing lost', async () => {
  const tally = new FaultTally('8. Redis full (maxmemory, noeviction) under a flood, then given room', 'submission');
  const team = await setup.newTeam({ plan: 'unlimited' });
  const { link } = await newLink(setup, team);
  const cal = (await team.api.post('/api/calendars', { name: 'Full', timezone: 'UTC' })).body.data;
  const evt = (await team.api.post(`/api/calendars/${cal.public_id}/events`, { title: 'Board', date_start: '2030-08-01 10:00', date_end: '2030-08-01 11:00', timezone: 'UTC' })).body.data;
  const url = link.url.replace(setup.baseUrl, gateway.baseUrl);
  // A few megabytes of room: a flood of a few thousand submissions fills it.
  const used = Number(/used_memory:(\d+)/.exec(await admin.info('memory'))?.[1]);
  await admin.config('SET', 'maxmemory', String(used + 3 * 1024 * 1024));

  const accepted = new Map<string, string>();
  const other: number[] = [];
  let missingRetryAfter = 0;
  const description = 'Notes for the day. '.repeat(40);
  let next = 0;
  const sendOne = async () => {
    const i = next++;
    const title = `Full flood ${i}`;
    const res = await tally.send(() => submitForm(url, { title, start: '2030-08-01 10:00', description }));
    if (res?.status === 202) accepted.set(res.body.data.id as string, title);
    else if (res?.status === 503) missingRetryAfter += res.headers.get('retry-after') ? 0 : 1;
    else other.push(res?.status ?? 0);
  };
  // Until Redis refuses: 50 at a time, then 450 more while it is at its limit. Some of those
  // still fit in what freed up meanwhile (client buffers, a small job, its index entry).
  // Then the limit goes below what Redis holds, so nothing fits: the last 50 are all refused.
  while (!tally.rejected[503]) await Promise.all(Array.from({ length: 50 }, sendOne));
  const refusedBefore = tally.rejected[503];
  for (let k = 0; k < 9; k++) await Promise.all(Array.from({ length: 50 }, sendOne));
  const full = Number(/used_memory:(\d+)/.exec(await admin.info('memory'))?.[1]);
  await admin.config('SET', 'maxmemory', String(full - 1024 * 1024));
  const refusedBeforeLast = tally.rejected[503];
  await Promise.all(Array.from({ length: 50 }, sendOne));
  expect(other).toEqual([]);
  expect(missingRetryAfter).toBe(0);
  expect(tally.rejected[503] - refusedBeforeLast).toBe(50);
  expect(tally.rejected[503] - refusedBefore).toBeGreaterThan(0);
  expect(accepted.size).toBeGreaterThan(0);

  // Not ready while writes are refused.
  expect(await status(`${gateway.baseUrl}/readyz`)).toBe(503);

  // Every other queued operation answers the same, and leaves nothing half-written: an
  // invitation (its delivery rows and invitees roll back with the refused jobs), an extraction.
  const invite = await team.api.post(`/api/calendars/${cal.public_id}/events/${evt.public_id}/invites`, { invitees: [{ email: 'full@example.com' }] });
  expect([invite.status, invite.headers.get('retry-after') !== null, invite.body]).toEqual([503, true, { message: 'Service temporarily unavailable.' }]);
  expect((await team.api.get(`/api/calendars/${cal.public_id}/events/${evt.public_id}/invites`)).body.data).toEqual([]);
  expect(Number((await setup.db('deliveries').where({ team_id: team.teamId }).count('* as n').first())?.n)).toBe(0);
  const extraction = await team.api.post('/api/events/extract', { text: 'Board meeting on 3 August 2030 at 10:00' });
  expect([extraction.status, extraction.headers.get('retry-after') !== null]).toEqual([503, true]);

  // A worker started now takes nothing (Redis refuses), and backs off instead of spinning.
  worker = await spawnWorker('smart-link-worker', { REDIS_URL: redis.url, QUEUE_PREFIX: prefix, LOG_LEVEL: 'info' });
  await waitFor(() => logLines(worker as WorkerProcess, 'Redis refuses writes; taking no jobs for a while').length >= 3, { what: 'the worker to back off three times', timeoutMs: 60_000 });
  expect(logLines(worker, 'worker error').length).toBeLessThanOrEqual(2);
  const workerLinesWhileFull = worker.stdout().split('\n').length;
  expect(workerLinesWhileFull).toBeLessThan(40);
  expect(await worker.readyz()).toBe(503);

  // The gateway's logs: every line short, none with a submission's content.
  const lines = gateway.stdout().split('\n').filter(Boolean);
  expect(lines.filter((l) => Buffer.byteLength(l) > MAX_LINE_BYTES)).toEqual([]);
  expect(lines.filter((l) => l.includes('Full flood') || l.includes('Notes for the day'))).toEqual([]);
  const logBytes = Buffer.byteLength(gateway.stdout());

  // Room again: both recover without a restart, and every 202 is one event.
  await admin.config('SET', 'maxmemory', '0');
  await waitFor(async () => (await status(`${gateway.baseUrl}/readyz`)) === 200 && (await (worker as WorkerProcess).readyz()) === 200, { what: 'both ready again', timeoutMs: 60_000 });
  await waitFor(() => drained(queue), { what: 'the queue to drain', timeoutMs: 90_000 });
  const audit = await auditSubmissions(setup.db, team.teamId, accepted);
  Object.assign(tally, { lost: audit.lost, duplicated: audit.duplicated });
  tally.note = `gateway log ${Math.round(logBytes / 1024)} KiB for ${tally.sent} requests, no line over ${MAX_LINE_BYTES} bytes or with a payload; the worker started while full backed off (${workerLinesWhileFull} log lines in three back-offs)`;
  tally.save();
  expect(audit).toEqual({ lost: 0, duplicated: 0, unacceptedStored: 0 });
});

it('warns at start when Redis may evict keys, and not when it may not', async () => {
  const logged: string[] = [];
  const logger = { error: (_o: object, m: string) => void logged.push(m), info: (_o: object, m: string) => void logged.push(m) };
  try {
    await admin.config('SET', 'maxmemory-policy', 'allkeys-lru');
    const evicting = createRedis(redis.url, 'worker');
    warnUnlessNoEviction(evicting, logger);
    await waitFor(() => logged.length > 0, { what: 'the warning' });
    expect(logged).toEqual(['Redis maxmemory-policy is allkeys-lru: a full Redis will delete queued jobs and lose accepted work; set maxmemory-policy noeviction']);
    await closeRedis(evicting);
  } finally {
    await admin.config('SET', 'maxmemory-policy', 'noeviction');
  }
  logged.length = 0;
  const keeping = createRedis(redis.url, 'worker');
  warnUnlessNoEviction(keeping, logger);
  await keeping.ping();
  await keeping.config('GET', 'maxmemory-policy');
  expect(logged).toEqual([]);
  await closeRedis(keeping);
});
