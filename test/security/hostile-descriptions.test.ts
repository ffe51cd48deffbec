import { createTeamWithOwner } from '../../shared/accounts/accounts.repository';
import { createDb } from '../../shared/db/knex';
import { closeRedis, createRedis } from '../../shared/queues/redis';
import { testEnv } from '../helpers/gateway';
import { crash, type GatewayProcess, spawnGateway, spawnWorker, type WorkerProcess } from '../helpers/service-processes';
import { waitFor } from '../helpers/wait';
import { dropPrefix, securityPrefix } from './fixtures';

/**
 * Hostile descriptions against the processes that read them: the gateway (event creates,
 * and dynamic-link pages, which need no token) and the smart-link worker (a no-token
 * submission's description is sanitized there, in a batch). Each is a 50,000-character
 * text of the shapes that cost a sanitizer most ("<p " without a ">" took the old HTML
 * check 0.3-0.7 s, on the event loop). Meanwhile both processes' /healthz are asked every
 * 100 ms with a 1 s deadline each, and every one must be answered: a count of answers, not
 * a measure of time.
 */
jest.setTimeout(120_000);

const NAME = 'descriptions';
const prefix = securityPrefix(NAME);
let gateway: GatewayProcess;
let worker: WorkerProcess;

beforeAll(async () => {
  [gateway, worker] = await Promise.all([spawnGateway({ QUEUE_PREFIX: prefix }), spawnWorker('smart-link-worker', { QUEUE_PREFIX: prefix })]);
});
afterAll(async () => {
  await Promise.all([gateway, worker].filter(Boolean).map((p) => crash(p)));
  const redis = createRedis(process.env.TEST_REDIS_URL as string, 'worker');
  await dropPrefix(redis, prefix).finally(() => closeRedis(redis));
});

const fill = (unit: string, length = 50_000) => unit.repeat(Math.ceil(length / unit.length)).slice(0, length);
const HOSTILE = [fill('<p '), fill('<a href="'), fill('a<b>c'), fill('<b>x'), fill('<!--<p ')];

/** Asks `url` every 100 ms, each with a 1 s deadline, until stopped; counts what was answered. */
function probe(url: string) {
  let sent = 0;
  let answered = 0;
  const pending: Array<Promise<void>> = [];
  const timer = setInterval(() => {
    sent++;
    pending.push(
      fetch(url, { signal: AbortSignal.timeout(1000) }).then(
        async (res) => {
          await res.arrayBuffer();
          if (res.ok) answered++;
        },
        () => undefined,
      ),
    );
  }, 100);
  return {
    async stop() {
      clearInterval(timer);
      await Promise.all(pending);
      return { sent, answered };
    },
  };
}

it('keeps answering /healthz on the gateway and the smart-link worker while they read hostile descriptions', async () => {
  const db = createDb(testEnv().DATABASE_URL as string, { poolMax: 2 });
  let stopProbes = async (): Promise<Array<{ sent: number; answered: number }>> => [];
  const owner = await createTeamWithOwner(db, { name: 'Hostile', email: `hostile-${Date.now()}@example.test`, plan: 'unlimited' });
  const api = async (path: string, body: unknown) => {
    const res = await fetch(`${gateway.baseUrl}${path}`, { method: 'POST', headers: { Authorization: `Bearer ${owner.token}`, 'Content-Type': 'application/json' }, body: JSON.stringify(body) });
    return { status: res.status, body: (await res.json()) as { data: Record<string, string> } };
  };
  try {
    const calendar = (await api('/api/calendars', { name: 'Hostile', timezone: 'UTC' })).body.data;
    const link = (await api('/api/smart-links', { name: 'Hostile', calendar: calendar.public_id })).body.data;
    const key = (await api('/api/dynamic-links', { name: 'Hostile' })).body.data;

    const probes = [probe(`${gateway.baseUrl}/healthz`), probe(`http://127.0.0.1:${worker.port}/healthz`)];
    stopProbes = () => Promise.all(probes.map((p) => p.stop()));
    // Each description sent three ways, three requests in flight at a time (one client's
    // pace; a flood is what the plans' rate limits are for).
    const sendOne = async (description: string, name: string) => {
      const event = await api(`/api/calendars/${calendar.public_id}/events`, { title: `Hostile ${name}`, date_start: '2031-05-01 10:00', date_end: '2031-05-01 11:00', timezone: 'UTC', description });
      const submission = await fetch(link.url, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ title: `Submitted ${name}`, start: '2031-05-01 10:00', description }),
      });
      // A page for an event that is not stored: its description comes in the query (as much as a URL holds).
      const query = new URLSearchParams({ uid: key.id, title: 'x', start: '2031-05-01 10:00', description: description.slice(0, 4000) });
      const page = await fetch(`${gateway.baseUrl}/api/dyn?${query}`);
      await Promise.all([submission.arrayBuffer(), page.arrayBuffer()]);
      return [event.status, submission.status, page.status];
    };
    const queue = HOSTILE.flatMap((description, kind) => Array.from({ length: 6 }, (_, i) => () => sendOne(description, `${kind}.${i}`)));
    const statuses: number[][] = [];
    await Promise.all(
      Array.from({ length: 3 }, async () => {
        for (let next = queue.shift(); next; next = queue.shift()) statuses.push(await next());
      }),
    );
    expect(new Set(statuses.map((s) => s.join(' ')))).toEqual(new Set(['200 202 200']));
    // Every submission read by the worker: an event each.
    await waitFor(async () => (await db('events').where({ team_id: owner.teamId }).whereLike('title', 'Submitted %').count<Array<{ n: number }>>('* as n'))[0].n >= 30, {
      what: 'the smart-link worker to make every event',
      timeoutMs: 60_000,
    });
    const [onGateway, onWorker] = await stopProbes();
    // The probes ran throughout, and each was answered within its second.
    expect(onGateway.sent).toBeGreaterThanOrEqual(5);
    expect(onWorker.sent).toBeGreaterThanOrEqual(5);
    expect({ gateway: onGateway, worker: onWorker }).toEqual({ gateway: { sent: onGateway.sent, answered: onGateway.sent }, worker: { sent: onWorker.sent, answered: onWorker.sent } });

    // What was stored is the sanitized description: "<p " without a ">" is text, escaped.
    const stored = await db('events').where({ team_id: owner.teamId }).whereIn('title', ['Hostile 0.0', 'Submitted 0.0']).pluck('description');
    expect(stored.map((d: string) => d.slice(0, 20))).toEqual(['<p>&lt;p &lt;p &lt;p', '<p>&lt;p &lt;p &lt;p']);
  } finally {
    await stopProbes();
    await db.destroy();
  }
});
