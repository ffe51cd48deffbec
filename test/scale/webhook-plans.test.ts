import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { webhookWorker } from '../../services/webhook-worker/webhook.worker';
import { WEBHOOK_JOB_DELIVERIES } from '../../shared/queues/webhook.job';
import { recordWebhookEvents } from '../../shared/webhooks/outbox';
import { sealSecret } from '../../shared/webhooks/secrets';
import { startGateway, type TestGateway } from '../helpers/gateway';
import { captureQueries, explainReads, type SentQuery } from '../helpers/query-plans';
import { isolatedDatabase, isolatedPrefix } from '../helpers/service-processes';
import { waitFor } from '../helpers/wait';
import { startWorker } from '../helpers/workers';

/**
 * The webhook worker's statements read about what a job holds, whatever the outbox holds,
 * and whatever Postgres's statistics say. The case that broke it: a burst of messages
 * committed at once, before autovacuum has analyzed the table again, so the statistics
 * still say a few dozen deliveries are pending while 10,000 are. A plan the planner shapes
 * from those statistics walked every pending delivery for each one a job had finished.
 * Here autovacuum is off for the table: the statistics stay those of the small outbox.
 */
const BURST = 10_000;
const JOB = WEBHOOK_JOB_DELIVERIES;
/**
 * What a statement may read: the relay looks at the 2,000 oldest due deliveries (and the
 * 400 of a webhook already out), a job at its 100 and the next message of each. A plan
 * walking the pending deliveries reads the whole burst.
 */
const READ_LIMIT = 3_000;

let gw: TestGateway;
let database: Awaited<ReturnType<typeof isolatedDatabase>>;
let server: http.Server;
let received = 0;

jest.setTimeout(120_000);

beforeAll(async () => {
  database = await isolatedDatabase('webhook_plans');
  gw = await startGateway({ DATABASE_URL: database.url });
  server = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      received++;
      res.writeHead(200).end('ok');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
});
afterAll(async () => {
  await gw?.close();
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
  await database?.drop();
});

it("the worker's statements read what a job holds after a burst the statistics have not seen", async () => {
  const team = await gw.newTeam();
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
  const [hook] = await gw.db('webhooks').insert({ uid: 'planhook00000001', team_id: team.teamId, url, secret_enc: sealSecret(gw.config.appKey, `whsec_${Buffer.alloc(24, 7).toString('base64')}`) }).returning('id');
  const messages = (n: number, name: string) =>
    Array.from({ length: n }, (_, i) => ({ teamId: team.teamId, type: 'event.created' as const, resource: `event:${name}${i}`, data: { uid: `${name}${i}` }, at: new Date(), webhookId: hook.id }));
  await gw.db.raw('ALTER TABLE webhook_deliveries SET (autovacuum_enabled = false)');
  const worker = await startWorker(webhookWorker, { DATABASE_URL: database.url, QUEUE_PREFIX: isolatedPrefix('webhook_plans'), WEBHOOK_ALLOW_HTTP: 'true', WEBHOOK_ALLOWED_NETWORKS: '127.0.0.1/32' });
  const { statements } = await (async () => {
    try {
      // A worker in service: what it sent is done, and the statistics say so.
      await gw.db.transaction((trx) => recordWebhookEvents(trx, messages(JOB, 'small')));
      await waitFor(async () => (await gw.db('webhook_deliveries').where({ status: 'pending' }).first()) === undefined, { what: 'the first messages sent' });
      await gw.db.raw('ANALYZE webhook_deliveries');
      received = 0;
      const burst = messages(BURST, 'burst');
      await gw.db.transaction(async (trx) => {
        for (let i = 0; i < BURST; i += 1000) await recordWebhookEvents(trx, burst.slice(i, i + 1000));
        // Its counts of changes reach the statistics views when it commits, not up to 10 s later.
        await trx.raw('SELECT pg_stat_force_next_flush()');
      });
      const at = Date.now();
      const analyzedAt = async () =>
        new Date((await gw.db.raw("SELECT last_analyze FROM pg_stat_user_tables WHERE relid = 'webhook_deliveries'::regclass")).rows[0].last_analyze ?? 0).getTime();
      // The worker has at most 400 deliveries of a webhook out at once: 1,000 received, several
      // jobs were recorded. And the relay, seeing the burst, had the table analyzed (autovacuum
      // is off for it here).
      const { queries } = await captureQueries(worker.ctx.db, async () => {
        await waitFor(() => received >= 1000, { what: 'several jobs' });
        await waitFor(async () => (await analyzedAt()) > at, { what: 'the outbox analyzed' });
      });
      return { statements: queries };
    } finally {
      await worker.close();
    }
  })();
  // A job's record, releasing the next message of each resource it finished.
  expect(statements.filter((q) => q.sql.includes('next AS (')).length).toBeGreaterThan(0);

  const kinds = new Map<string, SentQuery>();
  for (const q of statements) {
    const kind = q.sql.trim().replace(/\s+/g, ' ').slice(0, 50);
    if (!/^(BEGIN|COMMIT|ROLLBACK|ANALYZE)/i.test(kind) && !kinds.has(kind)) kinds.set(kind, q);
  }
  // The relay (its scan, its claim), the load, the record (attempts, next messages, the webhook's state).
  expect(kinds.size).toBeGreaterThanOrEqual(4);
  const heavy = async (which: (kind: string) => boolean) => {
    const found: string[] = [];
    for (const [kind, q] of kinds) {
      if (!which(kind)) continue;
      const reads = await explainReads(gw.db, q, { rollback: !/^select/i.test(kind) });
      if (reads.rows > READ_LIMIT) found.push(`${kind}… read ${reads.rows} rows:\n  ${reads.scans.join('\n  ')}`);
    }
    return found;
  };
  const isScan = (kind: string) => kind.startsWith('WITH RECURSIVE hooks');
  // Statistics as before the burst (nothing pending), the burst pending: what finds rows by id reads only those.
  await gw.db('webhook_deliveries').update({ status: 'succeeded' });
  await gw.db.raw('ANALYZE webhook_deliveries');
  await gw.db('webhook_deliveries').where('id', '>', JOB).update({ status: 'pending', relayed_at: null });
  expect(await heavy((kind) => !isScan(kind))).toEqual([]);
  // Statistics as the relay had them refreshed: its scan reads the oldest due, not the backlog.
  await gw.db.raw('ANALYZE webhook_deliveries');
  expect(await heavy(isScan)).toEqual([]);
});
