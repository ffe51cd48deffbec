import { spawn } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import { DIST, serviceArgv, startWorker } from './lib/processes';
import { postAll } from './baselines/webhook-poster';
import { row, type BenchRow } from './lib/report';
import { benchEnv, benchTeam, freshDatabase } from './lib/setup';
import { recordWebhookEvent } from '../shared/webhooks/outbox';
import { sealSecret } from '../shared/webhooks/secrets';

const MESSAGES = Number(process.env.BENCH_WEBHOOK_MESSAGES ?? 10_000);
/** Webhook worker processes (`npm start` runs one; more scale out, sharing the outbox). */
const WORKERS = Number(process.env.BENCH_WEBHOOK_WORKERS ?? 1);
/** Sent before the timed run, so the worker is running and warm as it is in service. */
const WARM_UP = 200;
/** As many requests at once as the worker makes to one endpoint (its per-endpoint limit). */
const BASELINE_CONCURRENCY = 4;

/** A local endpoint that answers 200 at once and counts what it got. */
async function receiver(): Promise<{ url: string; count(): number; firstAt(): number; reset(): void; close(): Promise<void> }> {
  let received = 0;
  let first = 0;
  const server = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      if (!received) first = Date.now();
      received++;
      res.writeHead(200).end('ok');
    });
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
    count: () => received,
    firstAt: () => first,
    reset: () => {
      received = 0;
    },
    close: async () => {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

const waitUntil = async (done: () => boolean, timeoutMs: number) => {
  const until = Date.now() + timeoutMs;
  while (!done()) {
    if (Date.now() > until) throw new Error('bench/webhooks: timed out');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
};

/**
 * bench/webhooks: 10,000 messages in the outbox of one team with one endpoint (a local
 * server answering 200), fanned out by one webhook worker process that is running and has
 * sent a few already, as in service: the rate from the commit of the messages to the last
 * delivery received (relay from Postgres, queue, signing, the POST, recording
 * each attempt). Baseline: a bare script in its own process (baselines/webhook-poster.ts)
 * POSTing the same signed bodies over a keep-alive agent, 4 at a time (the worker's limit
 * per endpoint), to the same server in the same run; and the same loop run in this process.
 */
export async function benchWebhooks(): Promise<BenchRow[]> {
  const { url, db } = await freshDatabase('webhooks');
  const team = await benchTeam(db);
  const target = await receiver();
  const prefix = `{bench-webhooks-${process.pid}}`;
  const env = benchEnv(url, { QUEUE_PREFIX: prefix, LOG_LEVEL: 'warn', WEBHOOK_ALLOW_HTTP: 'true', WEBHOOK_ALLOWED_NETWORKS: '127.0.0.1/32' });
  try {
    const secret = `whsec_${Buffer.alloc(24, 9).toString('base64')}`;
    const [hook] = await db('webhooks').insert({ uid: 'benchhook0000001', team_id: team.teamId, url: target.url, secret_enc: sealSecret(env.APP_KEY as string, secret) }).returning('id');
    const record = (count: number, name: string) =>
      db.transaction(async (trx) => {
        for (let i = 0; i < count; i++) {
          const data = { uid: `${name}${i}`, title: `Event ${i}`, date_start: '2031-01-01T10:00:00Z' };
          await recordWebhookEvent(trx, { teamId: team.teamId, type: 'event.created', resource: `event:${name}${i}`, data, at: new Date(), webhookId: hook.id });
          if (name === 'e') bodies.push(JSON.stringify({ type: 'event.created', timestamp: new Date().toISOString(), data }));
        }
      });
    const bodies: string[] = [];
    // The worker runs already, as in service, and has sent a few: its start-up is not timed.
    const workers = Array.from({ length: WORKERS }, () => startWorker(serviceArgv('webhook-worker'), env));
    let oursSeconds = 0;
    let steadySeconds = 0;
    try {
      await record(WARM_UP, 'w');
      await waitUntil(() => target.count() >= WARM_UP, 60_000);
      target.reset();
      console.error(`bench/webhooks: recording ${MESSAGES} messages in one transaction…`);
      await record(MESSAGES, 'e');
      const started = process.hrtime.bigint();
      await waitUntil(() => target.count() >= MESSAGES, 600_000);
      oursSeconds = Number(process.hrtime.bigint() - started) / 1e9;
      steadySeconds = (Date.now() - target.firstAt()) / 1000;
    } finally {
      await Promise.all(workers.map((w) => w.stop()));
    }
    const pending = await db('webhook_deliveries').where({ status: 'pending' }).count<{ count: string }[]>('* as count');
    if (Number(pending[0].count) !== 0 || target.count() !== MESSAGES) throw new Error(`bench/webhooks: ${target.count()} received, ${pending[0].count} pending`);

    // The bare script in its own process, as the worker is (the goal's baseline)...
    target.reset();
    const file = path.join(os.tmpdir(), `bench-webhooks-${process.pid}.json`);
    fs.writeFileSync(file, JSON.stringify(bodies));
    const child = spawn(process.execPath, [path.join(DIST, 'bench/baselines/webhook-poster.js'), file, target.url, secret, String(BASELINE_CONCURRENCY)], { stdio: ['ignore', 'pipe', 'inherit'] });
    const childStarted = await new Promise<bigint>((resolve, reject) => {
      child.stdout.on('data', (d: Buffer) => d.toString().includes('sending') && resolve(process.hrtime.bigint()));
      child.once('exit', (code) => reject(new Error(`baseline exited with ${code} before sending`)));
    });
    await waitUntil(() => target.count() >= MESSAGES, 600_000);
    const scriptSeconds = Number(process.hrtime.bigint() - childStarted) / 1e9;
    await new Promise((resolve) => (child.exitCode === null ? child.once('exit', resolve) : resolve(null)));
    fs.rmSync(file, { force: true });

    // ...and the same loop inside this process, beside its receiver: no process to wake on
    // either side of each request, which no sender elsewhere has (reported).
    target.reset();
    const baseStarted = process.hrtime.bigint();
    await postAll(target.url, secret, bodies, BASELINE_CONCURRENCY);
    const inProcessSeconds = Number(process.hrtime.bigint() - baseStarted) / 1e9;
    const ours = MESSAGES / oursSeconds;
    const script = MESSAGES / scriptSeconds;
    const inProcess = MESSAGES / inProcessSeconds;
    console.error(
      `bench/webhooks: ${WORKERS} worker${WORKERS > 1 ? 's' : ''} ${ours.toFixed(0)}/s (${(MESSAGES / steadySeconds).toFixed(0)}/s from its first delivery), bare script ${script.toFixed(0)}/s, the same loop beside the receiver ${inProcess.toFixed(0)}/s`,
    );
    return [
      row('webhooks', `${MESSAGES} deliveries to one endpoint${WORKERS > 1 ? ` (${WORKERS} worker processes)` : ''}, outbox commit to last received, vs a bare script in its own process, per second`, ours, script, 'deliveries/s', { atLeast: 0.7 }),
      row('webhooks', `same, vs the bare script's loop run inside the receiver's process, per second`, ours, inProcess, 'deliveries/s', { text: 'reported' }),
    ];
  } finally {
    await target.close();
    await db.destroy();
  }
}
