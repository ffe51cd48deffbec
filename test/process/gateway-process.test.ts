import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { createTeamWithOwner } from '../../shared/accounts/accounts.repository';
import { createDb, dropDatabase } from '../../shared/db/knex';
import { startGateway, testEnv } from '../helpers/gateway';
import { SERVICES } from '../../services/services';
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
    // The gateway closes the keep-alive connection once its answer is out (answers that
    // begin after SIGTERM also say Connection: close; see the drain test below).
    await waitFor(() => socket.readableEnded, { what: 'the gateway to close the connection' });
    socket.destroy();
    const exit = await gw.exited;
    expect(exit.code).toBe(0);
    expect(gw.stdout()).toContain('shutdown complete');
  });

  it('drains keep-alive clients on SIGTERM, closes Postgres and Redis, and exits 0', async () => {
    const port = await freePort();
    // A drain that stalls would be cut at the deadline (SHUTDOWN_TIMEOUT_MS less a reserve) with a warning.
    const gw = spawnNode(dist('gateway/main.js'), { ...testEnv({ LOG_LEVEL: 'debug', SHUTDOWN_TIMEOUT_MS: '20000' }), PORT: String(port) });
    running.push(gw);
    await healthy(port);

    // 50 clients, each on one keep-alive connection of its own, asking in a loop until a request fails.
    type Outcome = { afterSigterm: boolean; status?: number; connection?: string; error?: string };
    const outcomes: Outcome[] = [];
    let sigtermSent = false;
    const get = (agent: http.Agent) =>
      new Promise<Omit<Outcome, 'afterSigterm'>>((resolve) => {
        const req = http.get({ host: '127.0.0.1', port, path: '/healthz', agent }, (res) => {
          res.resume();
          res.on('end', () => resolve({ status: res.statusCode, connection: res.headers.connection }));
          res.on('error', (err: NodeJS.ErrnoException) => resolve({ error: err.code ?? err.message }));
        });
        req.on('error', (err: NodeJS.ErrnoException) => resolve({ error: err.code ?? err.message }));
      });
    const client = async () => {
      const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
      try {
        for (;;) {
          const afterSigterm = sigtermSent;
          const outcome = { afterSigterm, ...(await get(agent)) };
          outcomes.push(outcome);
          if (outcome.error) return;
        }
      } finally {
        agent.destroy();
      }
    };
    const clients = Array.from({ length: 50 }, client);
    await waitFor(() => outcomes.filter((o) => o.status === 200).length >= 500, { what: 'the clients to be under way' });
    expect(outcomes.filter((o) => o.error)).toEqual([]);

    sigtermSent = true;
    gw.proc.kill('SIGTERM');
    const exit = await gw.exited;
    await Promise.all(clients);

    expect(exit.code).toBe(0);
    const log = gw.stdout();
    expect(log).toContain('shutdown complete');
    for (const step of ['http', 'app', 'redis', 'postgres']) expect(log).toMatch(new RegExp(`"step":"${step}".*"msg":"closed"`));
    expect(log).not.toContain('shutdown timed out');
    expect(log).not.toContain('connections still open at the shutdown deadline');
    // After SIGTERM a request is answered, or finds the gateway gone: refused, or its idle
    // keep-alive socket closed under it (ECONNRESET) as it was sent.
    const after = outcomes.filter((o) => o.afterSigterm);
    for (const o of after) expect(o.status === 200 || o.error === 'ECONNREFUSED' || o.error === 'ECONNRESET' ? 'clean' : o).toBe('clean');
  });

  it('cuts a request still unfinished at the shutdown deadline, then closes Postgres and Redis', async () => {
    const port = await freePort();
    const gw = spawnNode(dist('gateway/main.js'), { ...testEnv({ LOG_LEVEL: 'debug', SHUTDOWN_TIMEOUT_MS: '3000' }), PORT: String(port) });
    running.push(gw);
    await healthy(port);
    // A body that never finishes (well within HTTP_REQUEST_TIMEOUT_MS): the request stays in flight.
    const socket = net.connect(port, '127.0.0.1');
    await new Promise((r) => socket.once('connect', r));
    socket.on('data', () => undefined);
    socket.write('POST /api/calendars HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"name":');
    gw.proc.kill('SIGTERM');
    const exit = await gw.exited;
    expect(exit.code).toBe(0);
    const log = gw.stdout();
    expect(log).toContain('connections still open at the shutdown deadline');
    for (const step of ['http', 'app', 'redis', 'postgres']) expect(log).toMatch(new RegExp(`"step":"${step}".*"msg":"closed"`));
    expect(log).toContain('shutdown complete');
    expect(log).not.toContain('shutdown timed out');
    await waitFor(() => socket.destroyed || socket.readableEnded, { what: 'the connection to be closed' });
    socket.destroy();
  });

  it('logs each request with its whole path, without the credentials it may carry', async () => {
    const port = await freePort();
    const gw = spawnNode(dist('gateway/main.js'), { ...testEnv({ LOG_LEVEL: 'info' }), PORT: String(port) });
    running.push(gw);
    await healthy(port);
    const key = 'SmartLinkKey0123456789abcdef';
    const token = 'PersonalFeedToken0123456789';
    await fetch(`http://127.0.0.1:${port}/s/${key}`, { method: 'POST', body: new URLSearchParams({ title: 'x' }) });
    // However the feed's address is spelled, as Express would serve it: case, a trailing slash, percent-encoding.
    for (const spelling of [`/feeds/${token}.ics`, `/feeds/${token}.ics/`, `/FEEDS/${token}.ics`, `/%66eeds/${token}.ics`, `/feeds/${token}.ics/more`]) {
      await fetch(`http://127.0.0.1:${port}/c/AAAAAAAAAAAAAAAA${spelling}`);
    }
    await fetch(`http://127.0.0.1:${port}/api/no-such-thing/x`);
    // The whole path, as requested (a mounted router would have cut its prefix off).
    await waitFor(() => gw.stdout().includes('"url":"/api/no-such-thing/x"'), { what: 'the unknown API path log line' });
    await waitFor(() => gw.stdout().split('/feeds/[redacted]').length > 5, { what: 'the feed request log lines' });
    await waitFor(() => gw.stdout().includes('"url":"/s/Smar…"'), { what: 'the submission request log line' });
    expect(gw.stdout()).not.toContain(key);
    expect(gw.stdout()).not.toContain(token);
  });

  it('lists every configuration problem and exits non-zero', async () => {
    const gw = spawnNode(dist('gateway/main.js'), { PORT: 'x', DATABASE_URL: 'mysql://nope', REDIS_URL: 'bad', TRUST_PROXY: 'maybe', NODE_ENV: 'production' });
    running.push(gw);
    const exit = await gw.exited;
    expect(exit.code).toBe(1);
    expect(gw.stderr()).toContain('Invalid configuration');
    for (const key of ['PORT', 'DATABASE_URL', 'REDIS_URL', 'TRUST_PROXY must be', 'APP_KEY is required']) expect(gw.stderr()).toContain(key);
    expect(gw.stderr()).not.toContain('    at ');
  });
});

describe('the extraction worker process', () => {
  it('starts, serves /healthz, /readyz and /metrics on PORT, and exits 0 on SIGTERM, its threads stopped', async () => {
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
    // Refusals are answered as the gateway answers them: JSON {"message"}, never cached.
    expect([anonymous.status, anonymous.headers.get('www-authenticate'), anonymous.headers.get('cache-control'), await anonymous.json()]).toEqual([
      401,
      'Bearer realm="metrics"',
      'no-store',
      { message: 'Unauthenticated.' },
    ]);
    expect((await fetch(`${base}/metrics`, { headers: { Authorization: 'Bearer wrong-token-0123456789' } })).status).toBe(401);
    const post = await fetch(`${base}/healthz`, { method: 'POST' });
    expect([post.status, post.headers.get('allow'), await post.json()]).toEqual([405, 'GET, HEAD', { message: 'This address does not take POST: use GET, HEAD.' }]);
    const metrics = await fetch(`${base}/metrics`, { headers: { Authorization: `Bearer ${token}` } });
    expect(metrics.headers.get('content-type')).toContain('text/plain');
    const text = await metrics.text();
    expect(text).toMatch(/^calendar_queue_jobs\{queue="extractions",state="waiting",service="extraction-worker"\} \d+$/m);
    expect(text).toContain('calendar_job_failures_total{queue="extractions",service="extraction-worker"} 0');
    expect(text).toContain('calendar_process_cpu_seconds_total');
    const other = await fetch(`${base}/other`);
    expect([other.status, other.headers.get('content-type'), await other.json()]).toEqual([404, 'application/json; charset=utf-8', { message: 'Not found.' }]);
    worker.proc.kill('SIGTERM');
    expect((await worker.exited).code).toBe(0);
    // Its extraction threads are stopped before it exits (after its jobs).
    expect(worker.stdout()).toContain('extraction threads stopped');
    expect(worker.stdout()).toContain('shutdown complete');
  });
});

describe('a process started while Redis is unreachable', () => {
  it.each([
    ['gateway', 'gateway/main.js'],
    ['extraction-worker', 'extraction-worker/main.js'],
  ])('%s answers /metrics at once with the series it has, leaving out the queue depths', async (service, entry) => {
    const port = await freePort();
    const closedRedis = `redis://127.0.0.1:${await freePort()}`;
    const token = 'metrics-token-0123456789';
    const proc = spawnNode(dist(entry), testEnv({ PORT: String(port), REDIS_URL: closedRedis, METRICS_TOKEN: token }));
    running.push(proc);
    await healthy(port);
    // Bounded only so that a hang fails here rather than at the test's timeout.
    const res = await fetch(`http://127.0.0.1:${port}/metrics`, { headers: { Authorization: `Bearer ${token}` }, signal: AbortSignal.timeout(15_000) });
    expect(res.status).toBe(200);
    const text = await res.text();
    expect(text).toContain(`calendar_process_cpu_seconds_total{service="${service}"}`);
    if (service === 'gateway') expect(text).toMatch(/^calendar_http_requests_total\{method="GET",route="\/healthz",status="200",service="gateway"\} \d+$/m);
    expect(text).not.toMatch(/^calendar_queue_jobs\{/m);
    // Readiness as docs/observability.md has it: Postgres and Redis reachable, else 503 (saying which).
    const ready = await fetch(`http://127.0.0.1:${port}/readyz`);
    expect([ready.status, await ready.json()]).toEqual([503, { status: 'unavailable', checks: { postgres: 'ok', redis: 'unavailable' } }]);
  });
});

describe('npm start (the launcher)', () => {
  it('creates and migrates a missing database, starts the gateway and the workers, and stops on SIGTERM', async () => {
    // The gateway on port, each worker on a port after it.
    const port = await freePortRange(SERVICES.length);
    const url = new URL(testEnv().DATABASE_URL as string);
    url.pathname = `${url.pathname}_launcher`;
    const outbox = fs.mkdtempSync(path.join(os.tmpdir(), 'launcher-outbox-'));
    // A queue prefix of its own: its workers must not take the other tests' jobs (another database).
    const env = {
      ...testEnv({ LOG_LEVEL: 'info', OUTBOX_DIR: outbox }),
      DATABASE_URL: url.toString(),
      PORT: String(port),
      PUBLIC_BASE_URL: `http://127.0.0.1:${port}`,
      QUEUE_PREFIX: `${process.env.TEST_QUEUE_PREFIX}launcher`,
    };
    await dropDatabase(env.DATABASE_URL);
    const launcher = spawnNode(dist('main.js'), env);
    running.push(launcher);
    try {
      await healthy(port);
      // Once every service is ready, one plain line a person reads (the rest is JSON logs).
      await waitFor(() => launcher.stdout().includes(`Ready: ${env.PUBLIC_BASE_URL}\n`), { what: 'the Ready line', timeoutMs: 30_000 });
      expect(launcher.stdout().split('\n').filter((line) => line.startsWith('Ready:'))).toEqual([`Ready: ${env.PUBLIC_BASE_URL}`]);
      for (const service of ['gateway', 'smart-link-worker', 'extraction-worker', 'mail-worker']) {
        await waitFor(() => launcher.stdout().includes(`"msg":"${service} ready"`), { what: `the ${service} ready line` });
      }
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

describe('npm start without Postgres or Redis', () => {
  it('says in one line each which setting points where, and exits 1, starting nothing', async () => {
    const [pgPort, redisPort] = [await freePort(), await freePort()];
    const env = testEnv({
      DATABASE_URL: `postgres://postgres:secret-pw@127.0.0.1:${pgPort}/calendar`,
      REDIS_URL: `redis://:other-secret@127.0.0.1:${redisPort}`,
      PORT: String(await freePort()),
      LOG_LEVEL: 'info',
    });
    const launcher = spawnNode(dist('main.js'), env);
    running.push(launcher);
    expect((await launcher.exited).code).toBe(1);
    expect(launcher.stderr().trim().split('\n')).toEqual([
      `Cannot reach PostgreSQL at 127.0.0.1:${pgPort} (DATABASE_URL): nothing is listening there. Start it, or point DATABASE_URL at one.`,
      `Cannot reach Redis at 127.0.0.1:${redisPort} (REDIS_URL): nothing is listening there. Start it, or point REDIS_URL at one.`,
    ]);
    expect(launcher.stdout()).not.toContain('started');
    // A service started alone waits instead, and says once what it waits for.
    const gateway = spawnNode(dist('gateway/main.js'), { ...env, DATABASE_URL: testEnv().DATABASE_URL as string });
    running.push(gateway);
    await waitFor(() => gateway.stdout().includes('not ready:'), { what: 'the waiting line', timeoutMs: 20_000 });
    const waiting = gateway.stdout().split('\n').filter((line) => line.includes('not ready:'));
    expect(waiting).toHaveLength(1);
    expect(JSON.parse(waiting[0]).msg).toBe(`not ready: cannot reach Redis at 127.0.0.1:${redisPort} (REDIS_URL), or it refuses writes; retrying`);
    expect(gateway.stdout() + gateway.stderr()).not.toContain('other-secret');
  });
});

describe('the admin CLI', () => {
  const admin = async (...args: string[]) => {
    const cli = spawnNode(dist('admin/main.js'), testEnv(), args);
    const { code } = await cli.exited;
    return { code, out: code === 0 ? JSON.parse(cli.stdout()) : null, err: cli.stderr() };
  };

  it('signs a team owner in to the dashboard with a link it emails, or prints', async () => {
    const email = `owner-cli-${Date.now()}@example.test`;
    expect((await admin('create-team', '--name', 'Linked', '--email', email)).code).toBe(0);
    const gw = await startGateway();
    try {
      const printed = (await admin('sign-in-link', '--email', email.toUpperCase(), '--print')).out;
      expect(printed.url.startsWith(`${testEnv().PUBLIC_BASE_URL ?? ''}`)).toBe(true);
      const token = new URL(printed.url).hash.slice('#token='.length);
      const signedIn = await gw.anon.post('/api/auth/sessions', { token });
      expect(signedIn.status).toBe(200);
      expect(signedIn.body.data.user).toMatchObject({ email, role: 'owner' });
      // Emailed: the link's job is queued for the mail worker, its row made with it.
      const emailed = await admin('sign-in-link', '--email', email);
      expect({ code: emailed.code, err: emailed.err }).toEqual({ code: 0, err: '' });
      expect(emailed.out).toMatchObject({ email, sent: true });
      expect(Number((await gw.db('sign_in_links').where({ email }).count('* as n').first())?.n)).toBe(2);
      expect(await admin('sign-in-link', '--email', 'nobody@example.test')).toMatchObject({ code: 2, err: expect.stringContaining('no user has the email') });
    } finally {
      await gw.close();
    }
  });

  it("moves a team to another plan and sets its own event limit, which its live tokens get at once", async () => {
    const email = `plan-${Date.now()}@example.test`;
    const created = (await admin('create-team', '--name', 'Growing', '--email', email)).out;
    const gw = await startGateway();
    try {
      const api = gw.anon.as(created.token);
      // Read once, so the gateway holds the token (and its plan's limits) in its cache.
      const before = await api.get('/api/account');
      expect(before.body.data.plan).toMatchObject({ id: 'free', monthly_event_limit: 50 });
      expect(Number(before.headers.get('x-ratelimit-limit'))).toBeLessThanOrEqual(120);
      const moved = await admin('set-plan', '--team', created.team_id, '--plan', 'pro', '--event-limit', '5000');
      expect({ code: moved.code, err: moved.err }).toEqual({ code: 0, err: '' });
      expect(moved.out).toEqual({ team_id: created.team_id, plan: 'pro', event_limit: 5000 });
      // The new plan's limits apply to the token the gateway holds (the CLI tells gateways to drop it).
      const after = await waitFor(async () => {
        const res = await api.get('/api/account');
        return Number(res.headers.get('x-ratelimit-limit')) >= 600 && res;
      }, { what: "the pro plan's rate limit on the cached token" });
      const account = after.body.data;
      expect(account.plan).toMatchObject({ id: 'pro', monthly_event_limit: 5000 });
      expect(account.usage.limit).toBe(5000);
      // Back to the plan's own limit.
      expect((await admin('set-plan', '--team', created.team_id, '--plan', 'pro', '--event-limit', 'none')).out.event_limit).not.toBe(5000);
      expect(await admin('set-plan', '--team', created.team_id, '--plan', 'gold')).toMatchObject({ code: 2, err: expect.stringContaining('plan must be one of') });
    } finally {
      await gw.close();
    }
  });

  it('lists teams, makes another token for a team, lists and revokes tokens (by id or by value)', async () => {
    const email = `tokens-${Date.now()}@example.test`;
    const created = (await admin('create-team', '--name', 'Tokens Inc', '--email', email)).out;
    const listed = (await admin('list-teams')).out;
    expect(listed.teams).toContainEqual(expect.objectContaining({ team_id: created.team_id, name: 'Tokens Inc', plan: 'free', owner_email: email, api_tokens: 1 }));
    const second = await admin('create-token', '--team', created.team_id, '--name', 'ci');
    expect(second.out).toMatchObject({ team_id: created.team_id, token_id: expect.stringMatching(/^tok_[0-9A-Za-z]{16}$/), name: 'ci', token: expect.stringMatching(/^cst_/) });
    const gw = await startGateway();
    try {
      expect((await gw.anon.as(second.out.token).get('/api/account')).body.data.team.id).toBe(created.team_id);
      const tokens = (await admin('list-tokens', '--team', created.team_id)).out.tokens;
      expect(tokens.map((t: { name: string }) => t.name)).toEqual(['ci', 'default']);
      expect(JSON.stringify(tokens)).not.toContain('cst_');
      // Revoked by id: refused at once, even by a gateway that had it cached.
      expect((await admin('revoke-token', '--token-id', second.out.token_id)).out).toMatchObject({ token_id: second.out.token_id, revoked: true });
      await waitFor(async () => (await gw.anon.as(second.out.token).get('/api/account')).status === 401, { what: 'the revoked token refused' });
      // Revoked by value (a leaked one).
      expect((await admin('revoke-token', '--token', created.token)).out).toMatchObject({ revoked: true });
      expect((await gw.anon.as(created.token).get('/api/account')).status).toBe(401);
      expect(await admin('revoke-token', '--token', created.token)).toMatchObject({ code: 2, err: expect.stringContaining('no live token matches') });
      expect(await admin('create-token', '--team', 'team_AAAAAAAAAAAAAAAA')).toMatchObject({ code: 2, err: expect.stringContaining('no team team_AAAAAAAAAAAAAAAA') });
      expect(await admin('revoke-token')).toMatchObject({ code: 2, err: expect.stringContaining('give --token-id or --token') });
    } finally {
      await gw.close();
    }
  });

  it('creates a team and prints one JSON object with a working token', async () => {
    const cli = spawnNode(dist('admin/main.js'), testEnv(), ['create-team', '--name', 'Acme', '--email', `cli-${Date.now()}@example.test`, '--plan', 'pro', '--event-limit', '7']);
    expect((await cli.exited).code).toBe(0);
    const out = JSON.parse(cli.stdout());
    expect(out).toMatchObject({ team_id: expect.stringMatching(/^team_/), user_id: expect.stringMatching(/^usr_/), plan: 'pro', event_limit: 7, event_limit_override: 7 });
    expect(out.token).toMatch(/^cst_[0-9A-Za-z]{40}$/);
    const gw = await startGateway();
    try {
      const account = await gw.anon.as(out.token).get('/api/account');
      expect(account.body.data).toMatchObject({ team: { id: out.team_id, name: 'Acme' }, plan: { id: 'pro', monthly_event_limit: 7 } });
    } finally {
      await gw.close();
    }
  });

  it('prints the monthly event limit in effect: the plan\'s when there is no override', async () => {
    for (const [plan, limit] of [['free', 50], ['unlimited', null]] as const) {
      const cli = spawnNode(dist('admin/main.js'), testEnv(), ['create-team', '--name', 'Acme', '--email', `cli-${plan}-${Date.now()}@example.test`, '--plan', plan]);
      expect((await cli.exited).code).toBe(0);
      expect(JSON.parse(cli.stdout())).toMatchObject({ plan, event_limit: limit, event_limit_override: null });
    }
  });

  it('prints its usage on stdout and exits 0 when asked for help', async () => {
    for (const args of [['help'], ['--help'], ['create-team', '--help']]) {
      const cli = spawnNode(dist('admin/main.js'), {}, args);
      expect({ args, code: (await cli.exited).code }).toEqual({ args, code: 0 });
      expect(cli.stdout()).toMatch(/^usage:\n/);
      expect(cli.stdout()).toContain('create-team --name NAME --email EMAIL');
      expect(cli.stderr()).toBe('');
    }
    const none = spawnNode(dist('admin/main.js'), {}, []);
    expect((await none.exited).code).toBe(2);
    expect(none.stderr()).toContain('no command given');
  });

  it('rejects bad arguments with every problem and exit code 2', async () => {
    const cli = spawnNode(dist('admin/main.js'), testEnv(), ['create-team', '--email', 'not-an-email', '--plan', 'gold']);
    expect((await cli.exited).code).toBe(2);
    expect(cli.stdout()).toBe('');
    for (const word of ['name', 'email', 'plan']) expect(cli.stderr()).toContain(word);
  });
});
