import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { FaultTally } from '../helpers/fault-summary';
import { startGateway, type TestGateway } from '../helpers/gateway';
import type { Spawned } from '../helpers/processes';
import { crash, isolatedDatabase, isolatedPrefix, spawnWorker } from '../helpers/service-processes';
import { waitFor } from '../helpers/wait';

/**
 * The webhook worker killed (SIGKILL) while its endpoint has not answered yet: a new worker
 * takes the delivery over and makes it again, with the same webhook-id, and it succeeds.
 * Events changed while no worker runs are in the outbox and go out once one starts.
 */
jest.setTimeout(120_000);

const base = { QUEUE_PREFIX: isolatedPrefix('webhook_kill'), WORKER_LOCK_MS: '2000', WEBHOOK_ALLOW_HTTP: 'true', WEBHOOK_ALLOWED_NETWORKS: '127.0.0.1/32' };
let env: Record<string, string> = base;
/** A database of its own: the webhook tests' worker, on the run's, would take this file's deliveries too. */
let database: Awaited<ReturnType<typeof isolatedDatabase>>;
let gw: TestGateway;
let server: http.Server;
let receiverUrl = '';
const received: Array<{ headers: http.IncomingHttpHeaders; body: string }> = [];
/** Requests held without an answer until released. */
let hold = true;
const held: http.ServerResponse[] = [];
const procs: Spawned[] = [];

beforeAll(async () => {
  server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      received.push({ headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
      if (hold) held.push(res);
      else res.writeHead(200).end('ok');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  receiverUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/in`;
  database = await isolatedDatabase('webhook_kill');
  env = { ...base, DATABASE_URL: database.url };
  gw = await startGateway(env);
});
afterAll(async () => {
  for (const p of procs) await crash(p);
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
  await gw?.close();
  await database?.drop();
});

it('a worker killed mid-delivery: the delivery is made again with the same webhook-id, once answered', async () => {
  const tally = new FaultTally('9. webhook worker SIGKILL while its endpoint holds the request', 'delivery');
  const team = await gw.newTeam();
  const hook = (await team.api.post('/api/webhooks', { url: receiverUrl })).body.data as { id: string; secret: string };
  const calendar = (await team.api.post('/api/calendars', { name: 'Killed', timezone: 'UTC' })).body.data;
  // Made while no worker runs: it waits in the outbox.
  const created = await team.api.post(`/api/calendars/${calendar.public_id}/events`, { title: 'Survives', date_start: '2031-01-01 10:00', date_end: '2031-01-01 11:00', timezone: 'UTC' });
  tally.count(created);

  const first = await spawnWorker('webhook-worker', env);
  procs.push(first);
  await waitFor(() => received.length >= 1, { what: 'the first attempt to reach the endpoint' });
  await crash(first);
  for (const res of held.splice(0)) res.destroy();
  hold = false;

  const second = await spawnWorker('webhook-worker', env);
  procs.push(second);
  const deliveries = await waitFor(async () => {
    const list = (await team.api.get(`/api/webhooks/${hook.id}/deliveries`)).body.data as Array<{ status: string; message_id: string; attempts: unknown[] }>;
    return list[0]?.status === 'succeeded' ? list : undefined;
  }, { what: 'the delivery to succeed', timeoutMs: 60_000 });

  expect(received.length).toBe(2);
  expect(new Set(received.map((r) => r.headers['webhook-id']))).toEqual(new Set([deliveries[0].message_id]));
  for (const r of received) expect((new Webhook(hook.secret).verify(r.body, r.headers as Record<string, string>) as { type: string }).type).toBe('event.created');
  // The killed worker's attempt was never recorded; the one that was answered is.
  expect(deliveries).toHaveLength(1);
  expect(deliveries[0].attempts).toHaveLength(1);
  Object.assign(tally, { lost: 0, duplicated: 0 });
  tally.note = `the killed attempt was made again under the same webhook-id (${deliveries[0].message_id}), so a receiver that drops seen ids acts once`;
  tally.save();
});
