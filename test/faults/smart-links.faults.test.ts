import { Queue } from 'bullmq';
import { smartLinkJob } from '../../shared/queues/smart-link.job';
import { smartLinkWorker } from '../../services/smart-link-worker/processor';
import { startGateway, testEnv, type TestGateway, type TestTeam } from '../helpers/gateway';
import { dist, spawnNode, type Spawned } from '../helpers/processes';
import { TestRedisServer } from '../helpers/redis-server';
import { TcpProxy } from '../helpers/tcp-proxy';
import { waitFor } from '../helpers/wait';
import { startWorker } from '../helpers/workers';
import { newLink, submitForm } from '../smart-links/helpers';

jest.setTimeout(120_000);

const LOCK_MS = '2000';
const form = (i: number) => ({ title: `Fault ${i}`, start: '2030-04-01 10:00', duration: '30' });

async function countFor(gw: TestGateway, teamId: number) {
  const [events] = await gw.db('events').where({ team_id: teamId }).count<{ count: number }[]>('* as count');
  const [rows] = await gw.db('smart_link_submissions').where({ team_id: teamId }).count<{ count: number }[]>('* as count');
  return { events: events.count, submissions: rows.count };
}

/** Every accepted submission ended as exactly one event and one submission row. */
async function expectExactlyOnce(gw: TestGateway, team: TestTeam, accepted: string[]) {
  await waitFor(async () => (await countFor(gw, team.teamId)).submissions === accepted.length, { what: 'every submission recorded', timeoutMs: 60_000 });
  const rows = await gw.db('smart_link_submissions').where({ team_id: team.teamId }).select('uid', 'status');
  expect(new Set(rows.map((r) => `sls_${r.uid}`))).toEqual(new Set(accepted));
  expect(rows.every((r) => r.status === 'processed')).toBe(true);
  expect(await countFor(gw, team.teamId)).toEqual({ events: accepted.length, submissions: accepted.length });
}

describe('faults: the smart-link worker', () => {
  let gw: TestGateway;
  const procs: Spawned[] = [];
  beforeAll(async () => {
    gw = await startGateway();
  });
  afterAll(async () => {
    for (const p of procs) if (p.proc.exitCode === null) p.proc.kill('SIGKILL');
    await gw.close();
  });

  it('killed with SIGKILL mid-batch and restarted: every accepted submission is exactly one event', async () => {
    const team = await gw.newTeam({ plan: 'unlimited' });
    const { link } = await newLink(gw, team);
    const env = testEnv({ WORKER_LOCK_MS: LOCK_MS });
    const first = spawnNode(dist('smart-link-worker/main.js'), env);
    procs.push(first);
    const accepted: string[] = [];
    const sends = Array.from({ length: 400 }, (_, i) => submitForm(link.url, form(i)).then((r) => r.status === 202 && accepted.push(r.body.data.id)));
    // kill it while it is writing: some submissions recorded, not all
    await waitFor(async () => (await countFor(gw, team.teamId)).submissions > 0, { what: 'the first batch', timeoutMs: 30_000 });
    first.proc.kill('SIGKILL');
    await first.exited;
    await Promise.all(sends);
    expect(accepted).toHaveLength(400);
    expect((await countFor(gw, team.teamId)).submissions).toBeLessThan(400);

    const second = spawnNode(dist('smart-link-worker/main.js'), env);
    procs.push(second);
    await expectExactlyOnce(gw, team, accepted);
    second.proc.kill('SIGTERM');
    expect((await second.exited).code).toBe(0);
  });

  it('loses Postgres (its connection cut): jobs retry and complete after it returns', async () => {
    const team = await gw.newTeam({ plan: 'unlimited' });
    const { link } = await newLink(gw, team);
    const pg = new URL(testEnv().DATABASE_URL as string);
    const proxy = await TcpProxy.start({ host: pg.hostname, port: Number(pg.port || 5432) });
    pg.host = `127.0.0.1:${proxy.port}`;
    const worker = await startWorker(smartLinkWorker, { DATABASE_URL: pg.toString() });
    const queue = new Queue(smartLinkJob.queue, { connection: gw.redis, prefix: gw.config.queuePrefix });
    try {
      await proxy.cut();
      const accepted: string[] = [];
      for (let i = 0; i < 20; i++) {
        const res = await submitForm(link.url, form(i));
        expect(res.status).toBe(202); // the gateway's own Postgres is fine
        accepted.push(res.body.data.id);
      }
      // the worker tried and failed at least once
      await waitFor(async () => ((await queue.getJob(accepted[0].slice(4)))?.attemptsMade ?? 0) >= 1, { what: 'a failed attempt', timeoutMs: 30_000 });
      expect((await countFor(gw, team.teamId)).submissions).toBe(0);
      await proxy.restore();
      await expectExactlyOnce(gw, team, accepted);
    } finally {
      await worker.close();
      await proxy.cut();
    }
  });
});

describe('faults: Redis', () => {
  it('stopped while the gateway runs: 503s and never a 202 without a stored job; recovery by itself', async () => {
    const redis = await TestRedisServer.start();
    const env = { REDIS_URL: redis.url, QUEUE_PREFIX: '{fault-redis}' };
    const gw = await startGateway(env);
    try {
      const team = await gw.newTeam({ plan: 'unlimited' });
      const { link } = await newLink(gw, team);
      const accepted: string[] = [];
      let n = 0;
      const send = async () => {
        const res = await submitForm(link.url, form(n++));
        if (res.status === 202) accepted.push(res.body.data.id);
        return res;
      };
      for (let i = 0; i < 5; i++) expect((await send()).status).toBe(202);

      await redis.kill();
      const during = [];
      for (let i = 0; i < 10; i++) during.push(await send());
      for (const res of during) {
        expect(res.status).toBe(503);
        expect(res.body).toEqual({ message: 'Service temporarily unavailable.' });
        expect(Number(res.headers.get('retry-after'))).toBeGreaterThan(0);
      }
      expect((await fetch(`${gw.baseUrl}/readyz`)).status).toBe(503);

      await redis.startProcess();
      await waitFor(async () => (await send()).status === 202, { what: 'the gateway to recover', timeoutMs: 30_000 });
      for (let i = 0; i < 5; i++) expect((await send()).status).toBe(202);

      // every 202 has its job: a worker on this Redis turns each into one event
      const worker = await startWorker(smartLinkWorker, env);
      try {
        await expectExactlyOnce(gw, team, accepted);
      } finally {
        await worker.close();
      }
    } finally {
      await gw.close();
      await redis.stop();
    }
  });
});
