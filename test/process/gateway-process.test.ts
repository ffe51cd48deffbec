import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { createTeamWithOwner } from '../../shared/accounts/accounts.repository';
import { createDb, dropDatabase } from '../../shared/db/knex';
import { startGateway, testEnv } from '../helpers/gateway';
import { dist, freePort, freePortRange, spawnNode, type Spawned } from '../helpers/processes';
import { waitFor } from '../helpers/wait';

const running: Spawned[] = [];
afterEach(() => {
  for (const s of running.splice(0)) if (s.proc.exitCode === null) s.proc.kill('SIGKILL');
});

async function healthy(port: number) {
  return waitFor(async () => (await fetch(`http://127.0.0.1:${port}/healthz`)).ok, { what: 'the gateway to answer', timeoutMs: 20_000 });
}

describe('the gateway process', () => {
  it('finishes an in-flight request after SIGTERM, then exits 0', async () => {
    const port = await freePort();
    const gw = spawnNode(dist('gateway/main.js'), { ...testEnv({ LOG_LEVEL: 'info' }), PORT: String(port) });
    running.push(gw);
    await healthy(port);
    // Log lines are written asynchronously: the line may follow the first answer by a moment.
    await waitFor(() => gw.stdout().includes(`gateway listening on http://localhost:${port}`), { what: 'the "listening" log line' });

    // Start a request (the server's "100 Continue" proves it is in flight), SIGTERM, then send the body.
    const body = JSON.stringify({ name: 'x', timezone: 'UTC' });
    const socket = net.connect(port, '127.0.0.1');
    await new Promise((r) => socket.once('connect', r));
    let answer = '';
    socket.on('data', (d) => (answer += d));
    socket.write(`POST /api/calendars HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nExpect: 100-continue\r\nContent-Length: ${body.length}\r\n\r\n`);
    await waitFor(() => answer.startsWith('HTTP/1.1 100 Continue'), { what: '100 Continue' });
    answer = '';
    gw.proc.kill('SIGTERM');
    await waitFor(() => gw.stdout().includes('shutting down'), { what: 'shutdown to start' });
    socket.write(body);
    await waitFor(() => answer.includes('\r\n\r\n') && answer, { what: 'the in-flight answer' });
    expect(answer).toMatch(/^HTTP\/1.1 401/);
    socket.destroy();
    const exit = await gw.exited;
    expect(exit.code).toBe(0);
    expect(gw.stdout()).toContain('shutdown complete');
  });

  it('lists every configuration problem and exits non-zero', async () => {
    const gw = spawnNode(dist('gateway/main.js'), { PORT: 'x', DATABASE_URL: 'mysql://nope', REDIS_URL: 'bad' });
    running.push(gw);
    const exit = await gw.exited;
    expect(exit.code).toBe(1);
    expect(gw.stderr()).toContain('Invalid configuration');
    for (const key of ['PORT', 'DATABASE_URL', 'REDIS_URL']) expect(gw.stderr()).toContain(key);
  });
});

describe('the extraction worker process', () => {
  it('starts, serves /healthz, /readyz and /metrics on PORT, and exits 0 on SIGTERM', async () => {
    const port = await freePort();
    const token = 'metrics-token-0123456789';
    const worker = spawnNode(dist('extraction-worker/main.js'), testEnv({ LOG_LEVEL: 'info', PORT: String(port), METRICS_TOKEN: token }));
    running.push(worker);
    await waitFor(() => worker.stdout().includes('extraction-worker started'), { what: 'the worker to start', timeoutMs: 20_000 });
    const base = `http://127.0.0.1:${port}`;
    expect(await (await fetch(`${base}/healthz`)).json()).toEqual({ status: 'ok' });
    const ready = await fetch(`${base}/readyz`);
    expect([ready.status, await ready.json()]).toEqual([200, { status: 'ok', checks: { postgres: 'ok', redis: 'ok' } }]);
    const anonymous = await fetch(`${base}/metrics`);
    expect(anonymous.status).toBe(401);
    expect(anonymous.headers.get('www-authenticate')).toContain('Bearer');
    expect((await fetch(`${base}/metrics`, { headers: { Authorization: 'Bearer wrong-token-0123456789' } })).status).toBe(401);
    const metrics = await fetch(`${base}/metrics`, { headers: { Authorization: `Bearer ${token}` } });
    expect(metrics.headers.get('content-type')).toContain('text/plain');
    const text = await metrics.text();
    expect(text).toMatch(/^calendar_queue_jobs\{queue="extractions",state="waiting",service="extraction-worker"\} \d+$/m);
    expect(text).toContain('calendar_job_failures_total{queue="extractions",service="extraction-worker"} 0');
    expect(text).toContain('calendar_process_cpu_seconds_total');
    expect((await fetch(`${base}/other`)).status).toBe(404);
    worker.proc.kill('SIGTERM');
    expect((await worker.exited).code).toBe(0);
    expect(worker.stdout()).toContain('shutdown complete');
  });
});

describe('npm start (the launcher)', () => {
  it('creates and migrates a missing database, starts the gateway and the workers, and stops on SIGTERM', async () => {
    // The gateway on port, the three workers on the ports after it.
    const port = await freePortRange(4);
    const url = new URL(testEnv().DATABASE_URL as string);
    url.pathname = `${url.pathname}_launcher`;
    const outbox = fs.mkdtempSync(path.join(os.tmpdir(), 'launcher-outbox-'));
    // A queue prefix of its own: its workers must not take the other tests' jobs (another database).
    const env = {
      ...testEnv({ LOG_LEVEL: 'info', OUTBOX_DIR: outbox }),
      DATABASE_URL: url.toString(),
      PORT: String(port),
      QUEUE_PREFIX: `${process.env.TEST_QUEUE_PREFIX}launcher`,
    };
    await dropDatabase(env.DATABASE_URL);
    const launcher = spawnNode(dist('main.js'), env);
    running.push(launcher);
    try {
      await healthy(port);
      const ready = await waitFor(async () => (await fetch(`http://127.0.0.1:${port}/readyz`)).status === 200, { what: 'readiness' });
      expect(ready).toBe(true);
      await waitFor(() => launcher.stdout().includes('applied migrations'), { what: 'the migrations log line' });

      // End to end through the launched processes: the gateway queues, the extraction worker reads.
      const db = createDb(env.DATABASE_URL, { poolMax: 1 });
      const owner = await createTeamWithOwner(db, { name: 'Launch', email: `launch-${Date.now()}@example.test`, plan: 'pro', eventLimit: null }).finally(() => db.destroy());
      await waitFor(() => launcher.stdout().includes('extraction-worker started'), { what: 'the extraction worker' });
      const res = await fetch(`http://127.0.0.1:${port}/api/events/extract?wait=10`, {
        method: 'POST',
        headers: { Authorization: `Bearer ${owner.token}`, 'Content-Type': 'application/json' },
        body: JSON.stringify({ text: 'Launch review on 2026-06-01 at 10:00', timezone: 'Europe/Paris' }),
      });
      expect(res.status).toBe(200);
      expect(((await res.json()) as { data: { result: unknown } }).data.result).toMatchObject({ title: 'Launch review', date_start: '2026-06-01T10:00:00+02:00' });
      await waitFor(() => launcher.stdout().includes('mail-worker started'), { what: 'the mail worker' });
      await waitFor(() => launcher.stdout().includes('smart-link-worker started'), { what: 'the smart-link worker' });
      expect(launcher.stdout()).toContain(`no SMTP_URL: writing mail to ${outbox}`);
      for (const workerPort of [port + 1, port + 2, port + 3]) expect((await fetch(`http://127.0.0.1:${workerPort}/readyz`)).status).toBe(200);

      launcher.proc.kill('SIGTERM');
      expect((await launcher.exited).code).toBe(0);
      await expect(fetch(`http://127.0.0.1:${port}/healthz`)).rejects.toThrow();
    } finally {
      await dropDatabase(env.DATABASE_URL);
      fs.rmSync(outbox, { recursive: true, force: true });
    }
  });
});

describe('the admin CLI', () => {
  it('creates a team and prints one JSON object with a working token', async () => {
    const cli = spawnNode(dist('admin/main.js'), testEnv(), ['create-team', '--name', 'Acme', '--email', `cli-${Date.now()}@example.test`, '--plan', 'pro', '--event-limit', '7']);
    expect((await cli.exited).code).toBe(0);
    const out = JSON.parse(cli.stdout());
    expect(out).toMatchObject({ team_id: expect.stringMatching(/^team_/), user_id: expect.stringMatching(/^usr_/), plan: 'pro', event_limit: 7 });
    expect(out.token).toMatch(/^cst_[0-9A-Za-z]{40}$/);
    const gw = await startGateway();
    try {
      const account = await gw.anon.as(out.token).get('/api/account');
      expect(account.body.data).toMatchObject({ team: { id: out.team_id, name: 'Acme' }, plan: { id: 'pro', monthly_event_limit: 7 } });
    } finally {
      await gw.close();
    }
  });

  it('rejects bad arguments with every problem and exit code 2', async () => {
    const cli = spawnNode(dist('admin/main.js'), testEnv(), ['create-team', '--email', 'not-an-email', '--plan', 'gold']);
    expect((await cli.exited).code).toBe(2);
    expect(cli.stdout()).toBe('');
    for (const word of ['name', 'email', 'plan']) expect(cli.stderr()).toContain(word);
  });
});
