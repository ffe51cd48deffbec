import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { webhookWorker } from '../../services/webhook-worker/webhook.worker';
import { recordWebhookEvents } from '../../shared/webhooks/outbox';
import { sealSecret } from '../../shared/webhooks/secrets';
import { startGateway, type TestGateway } from '../helpers/gateway';
import { isolatedDatabase, isolatedPrefix } from '../helpers/service-processes';
import { waitFor } from '../helpers/wait';
import { startWorker, type TestWorker } from '../helpers/workers';

/**
 * One team's slow endpoint with thousands of deliveries due cannot hold up another team's
 * webhooks: the relay gives each webhook its turn, whatever is oldest in the outbox. Before,
 * it looked at the 2,000 oldest due deliveries only; all were the slow webhook's, which was
 * at its limit in flight, so the other team's delivery waited until thousands of the slow
 * webhook's had been relayed and put back (over 30 s with 6,000 due).
 */
jest.setTimeout(60_000);

const BACKLOG = 6000;
let gw: TestGateway;
let database: Awaited<ReturnType<typeof isolatedDatabase>>;
let worker: TestWorker<unknown, unknown> | undefined;
let slowServer: http.Server;
let slowServerHeld = 0;
/** A receiving service where every path is slow: '/1' … '/5', a webhook each. */
let crowdedServer: http.Server;
let crowdedHeld = 0;
let quickServer: http.Server;
/** One receiving service for two teams: '/slow' never answers, '/quick' at once. */
let sharedServer: http.Server;
let sharedReceived = 0;
let slowHeld = 0;
let slowGivenUp = 0;
let received = 0;

beforeAll(async () => {
  database = await isolatedDatabase('webhook_fairness');
  gw = await startGateway({ DATABASE_URL: database.url });
  // Two endpoints (two origins, as two teams' would be): one never answers (until the test
  // ends), the other at once.
  slowServer = http.createServer((req) => {
    req.resume();
    slowServerHeld++;
  });
  crowdedServer = http.createServer((req) => {
    req.resume();
    crowdedHeld++;
  });
  quickServer = http.createServer((req, res) => {
    req.resume();
    received++;
    res.end('ok');
  });
  sharedServer = http.createServer((req, res) => {
    req.resume();
    if (req.url === '/quick') {
      sharedReceived++;
      res.end('ok');
    } else {
      slowHeld++;
      // Never answered: closed only by the worker giving the attempt up (its 15 s timeout).
      res.on('close', () => slowGivenUp++);
    }
  });
  for (const server of [slowServer, quickServer, sharedServer, crowdedServer]) await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
});
afterAll(async () => {
  // The held attempts fail, and the ones after them at once: the worker's jobs end.
  const servers = [slowServer, quickServer, sharedServer, crowdedServer];
  const closed = servers.map((server) => new Promise((resolve) => server.close(resolve)));
  for (const server of servers) server.closeAllConnections();
  await worker?.close();
  await Promise.all(closed);
  await gw?.close();
  await database?.drop();
});

const url = (server: http.Server, path = '/hook') => `http://127.0.0.1:${(server.address() as AddressInfo).port}${path}`;
const messages = (teamId: number, webhookId: number, n: number, name: string) =>
  Array.from({ length: n }, (_, i) => ({ teamId, type: 'event.created' as const, resource: `event:${name}${i}`, data: { uid: `${name}${i}` }, at: new Date(), webhookId }));
const hook = async (teamId: number, address: string, uid: string) =>
  (await gw.db('webhooks').insert({ uid, team_id: teamId, url: address, secret_enc: sealSecret(gw.config.appKey, `whsec_${Buffer.alloc(24, 3).toString('base64')}`) }).returning('id'))[0].id as number;
const relayed = async (webhookId: number) => Number((await gw.db('webhook_deliveries').where({ webhook_id: webhookId }).sum<{ n: string }[]>('relays as n'))[0].n);

it("delivers another team's message while one team's slow endpoint has thousands due", async () => {
  const [slowTeam, quickTeam] = [await gw.newTeam(), await gw.newTeam()];
  const slow = await hook(slowTeam.teamId, url(slowServer), 'fairslow00000001');
  const quick = await hook(quickTeam.teamId, url(quickServer), 'fairquick0000001');
  await gw.db.transaction((trx) => recordWebhookEvents(trx, messages(slowTeam.teamId, slow, BACKLOG, 'slow')));
  worker = (await startWorker(webhookWorker, { DATABASE_URL: database.url, QUEUE_PREFIX: isolatedPrefix('webhook_fairness'), WEBHOOK_ALLOW_HTTP: 'true', WEBHOOK_ALLOWED_NETWORKS: '127.0.0.1/32' })) as unknown as TestWorker<unknown, unknown>;
  // The slow endpoint holds its first attempts: its webhook is at its limit in flight.
  await waitFor(async () => (await relayed(slow)) >= 400, { what: "the slow webhook's first deliveries relayed" });
  // Then the other team's message, newer than every one of the backlog.
  await gw.db.transaction((trx) => recordWebhookEvents(trx, messages(quickTeam.teamId, quick, 1, 'quick')));
  await waitFor(() => received === 1, { what: "the other team's delivery", timeoutMs: 30_000 });
  // It did not wait for the backlog to be looked at (relayed, and put back) in turn: the
  // slow webhook's deliveries went out a few hundred at a time meanwhile, not thousands.
  expect(await relayed(slow)).toBeLessThan(1000);
  // And the slow webhook was sent 4 at once, no more (none has been given up yet).
  expect(slowServerHeld).toBe(4);
});

it("delivers another team's message on the same receiving service as a slow path", async () => {
  const [slowTeam, quickTeam] = [await gw.newTeam(), await gw.newTeam()];
  const slow = await hook(slowTeam.teamId, url(sharedServer, '/slow'), 'fairslow00000002');
  const quick = await hook(quickTeam.teamId, url(sharedServer, '/quick'), 'fairquick0000002');
  await gw.db.transaction((trx) => recordWebhookEvents(trx, messages(slowTeam.teamId, slow, 400, 'slow2-')));
  await waitFor(() => slowHeld >= 4, { what: "the slow path's attempts, held" });
  await gw.db.transaction((trx) => recordWebhookEvents(trx, messages(quickTeam.teamId, quick, 1, 'quick2-')));
  // The slow path holds its webhook's 4 places at the service, not the service's: the other
  // team's delivery goes while they are still held, not when one is given up.
  await waitFor(() => sharedReceived === 1, { what: "the other team's delivery", timeoutMs: 30_000 });
  expect(slowGivenUp).toBe(0);
  expect(slowHeld).toBe(4);
});

it('sends a receiving service 16 attempts at once at most, whoever\'s webhooks are there', async () => {
  const team = await gw.newTeam();
  const hooks: number[] = [];
  for (let i = 1; i <= 5; i++) hooks.push(await hook(team.teamId, url(crowdedServer, `/${i}`), `faircrowd000000${i}`));
  await gw.db.transaction(async (trx) => {
    for (const [i, id] of hooks.entries()) await recordWebhookEvents(trx, messages(team.teamId, id, 10, `crowd${i}-`));
  });
  await waitFor(() => crowdedHeld >= 16, { what: "the service's places taken" });
  // A delivery that found no place was put back and relayed again: the worker has gone on
  // trying while the 16 were held, and made no 17th attempt.
  await waitFor(async () => (await gw.db('webhook_deliveries').whereIn('webhook_id', hooks).where('relays', '>', 1).first()) !== undefined, {
    what: 'a delivery put back for want of a place',
  });
  expect(crowdedHeld).toBe(16);
});
