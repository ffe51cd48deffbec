import net from 'node:net';
import { createTeamWithOwner } from '../../shared/accounts/accounts.repository';
import { createDb } from '../../shared/db/knex';
import { closeRedis, createRedis } from '../../shared/queues/redis';
import { testEnv } from '../helpers/gateway';
import { dist, freePort, spawnNode, type Spawned } from '../helpers/processes';
import { waitFor } from '../helpers/wait';
import { dropPrefix, securityPrefix } from './fixtures';

/**
 * Slow clients against the gateway process (its real http server, with the timeouts it
 * reads from HTTP_HEADERS_TIMEOUT_MS and HTTP_REQUEST_TIMEOUT_MS): a client that dribbles its
 * headers, or sends them and never the body, is answered 408 and its connection closed; while
 * hundreds of such clients hold connections open, everyone else is still served. Only what
 * happens is asserted, never how long it took.
 */

const running: Spawned[] = [];
const sockets: net.Socket[] = [];

afterEach(() => {
  for (const s of sockets.splice(0)) s.destroy();
});
afterAll(async () => {
  const stopping = running.splice(0);
  for (const p of stopping) if (p.proc.exitCode === null) p.proc.kill('SIGKILL');
  await Promise.all(stopping.map((p) => p.exited));
  const redis = createRedis(process.env.TEST_REDIS_URL as string, 'worker');
  await dropPrefix(redis, securityPrefix('slow')).finally(() => closeRedis(redis));
});

async function gateway(env: Record<string, string>): Promise<number> {
  const port = await freePort();
  const gw = spawnNode(dist('gateway/main.js'), { ...testEnv({ QUEUE_PREFIX: securityPrefix('slow'), ...env }), PORT: String(port) });
  running.push(gw);
  await waitFor(async () => (await fetch(`http://127.0.0.1:${port}/healthz`)).ok, { what: 'the gateway to answer', timeoutMs: 20_000 });
  return port;
}

interface SlowClient {
  socket: net.Socket;
  received: () => string;
  closed: () => boolean;
}

/** A raw connection that sends `head` and then, if asked, one more byte every `dribbleMs`. */
async function slowClient(port: number, head: string, dribble?: { byte: string; everyMs: number }): Promise<SlowClient> {
  const socket = net.connect(port, '127.0.0.1');
  sockets.push(socket);
  let received = '';
  let closed = false;
  socket.on('data', (d) => (received += d));
  socket.on('error', () => undefined);
  socket.on('close', () => (closed = true));
  await new Promise<void>((resolve, reject) => {
    socket.once('connect', resolve);
    socket.once('error', reject);
  });
  socket.write(head);
  if (dribble) {
    const timer = setInterval(() => {
      if (!socket.destroyed && socket.writable) socket.write(dribble.byte);
    }, dribble.everyMs);
    socket.on('close', () => clearInterval(timer));
  }
  return { socket, received: () => received, closed: () => closed };
}

/** A smart link made through the process's own API (its key waits for a body). */
async function smartLinkKey(port: number): Promise<string> {
  const db = createDb(testEnv().DATABASE_URL as string, { poolMax: 1 });
  const owner = await createTeamWithOwner(db, { name: 'Slow', email: `slow-${Date.now()}@example.test`, plan: 'unlimited' }).finally(() => db.destroy());
  const api = (path: string, body: unknown) =>
    fetch(`http://127.0.0.1:${port}${path}`, { method: 'POST', headers: { Authorization: `Bearer ${owner.token}`, 'Content-Type': 'application/json' }, body: JSON.stringify(body) }).then(
      async (r) => ((await r.json()) as { data: { public_id: string; key: string } }).data,
    );
  const cal = await api('/api/calendars', { name: 'Slow', timezone: 'UTC' });
  return (await api('/api/smart-links', { name: 'Slow', calendar: cal.public_id })).key;
}

describe('a gateway with short limits', () => {
  let port: number;
  let key: string;
  beforeAll(async () => {
    port = await gateway({ HTTP_HEADERS_TIMEOUT_MS: '1000', HTTP_REQUEST_TIMEOUT_MS: '2000' });
    key = await smartLinkKey(port);
  }, 30_000);

  it('answers 408 and closes the connection of every kind of slow client', async () => {
    const cases: Array<[string, string, { byte: string; everyMs: number }?]> = [
      ['headers dribbled a byte at a time', 'GET /api/calendars HTTP/1.1\r\nHost: x\r\nX-Slow: ', { byte: 'a', everyMs: 50 }],
      ['a request line never finished', 'GE'],
      ['an API body announced and never sent', 'POST /api/calendars HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"na'],
      ['a smart-link body announced and never sent', `POST /s/${key} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"ti`],
      ['an RSVP form announced and never sent', 'POST /e/AAAAAAAAAAAAAAAA/rsvp HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: 1000\r\n\r\nna'],
      ['a body dribbled past the request limit', 'POST /api/calendars HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n{"name":"', { byte: 'x', everyMs: 50 }],
    ];
    const answers = await Promise.all(
      cases.map(async ([what, head, dribble]) => {
        const client = await slowClient(port, head, dribble);
        await waitFor(() => client.closed(), { what: `the server to close on ${what}`, timeoutMs: 20_000 });
        return [what, client.received().split('\r\n')[0]];
      }),
    );
    expect(answers).toEqual(cases.map(([what]) => [what, 'HTTP/1.1 408 Request Timeout']));
  });
});

describe('a gateway with hundreds of slow clients connected', () => {
  it('still answers everyone else', async () => {
    // Limits far above the test's length: every slow client stays connected throughout.
    const port = await gateway({ HTTP_HEADERS_TIMEOUT_MS: '120000', HTTP_REQUEST_TIMEOUT_MS: '240000' });
    const slow: SlowClient[] = [];
    for (let i = 0; i < 300; i++) {
      slow.push(
        await slowClient(
          port,
          i % 2 ? 'GET /api/calendars HTTP/1.1\r\nHost: x\r\nX-Slow: ' : 'POST /api/calendars HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{',
        ),
      );
    }
    const answers = await Promise.all([
      fetch(`http://127.0.0.1:${port}/healthz`),
      fetch(`http://127.0.0.1:${port}/readyz`),
      fetch(`http://127.0.0.1:${port}/api/calendars`, { headers: { Authorization: 'Bearer cst_not-a-real-token-at-all' } }),
      fetch(`http://127.0.0.1:${port}/docs.openapi`),
    ]);
    expect(answers.map((r) => r.status)).toEqual([200, 200, 401, 200]);
    expect(slow.filter((c) => c.closed() || c.received() !== '')).toEqual([]);
  }, 60_000);
});
