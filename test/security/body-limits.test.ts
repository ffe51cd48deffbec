import http from 'node:http';
import type { TestGateway } from '../helpers/gateway';
import { dropPrefix, fillPath, type Operation, operations, securityPrefix, type Seeded, seedTeam, startSecurityGateway, teamDigest } from './fixtures';

/**
 * Oversized bodies: every operation of the OpenAPI document that takes a body refuses one
 * over its limit (the limits docs/security.md documents) with 413 and `{"message": …}`, in every
 * content type it takes, whether the size is declared (Content-Length) or not (chunked),
 * and a body exactly at the limit is read. Nothing is stored.
 */

const NAME = 'limits';
const KiB = 1024;

/** docs/security.md: the documented limits, by path. */
const LIMITS: Array<[RegExp, number]> = [
  [/^\/api\//, 1024 * KiB],
  [/^\/s\//, 64 * KiB],
  [/^\/e\/\{uid\}\/(?:rsvp|reply)$/, 8 * KiB],
  [/^\/e\/\{uid\}\/unlock$/, 4 * KiB],
  [/^\/c\/\{uid\}\/subscribe\//, 4 * KiB],
];

let gw: TestGateway;
let seed: Seeded;
let withBody: Operation[];

beforeAll(async () => {
  gw = await startSecurityGateway(NAME);
  seed = await seedTeam(gw, await gw.newTeam({ plan: 'unlimited' }));
  withBody = operations(gw.openapi).filter((op) => op.body);
});
afterAll(async () => {
  if (gw) await dropPrefix(gw.redis, securityPrefix(NAME));
  await gw?.close();
});

const limitOf = (op: Operation) => LIMITS.find(([pattern]) => pattern.test(op.path))?.[1];

function pathOf(op: Operation): string {
  const values: Record<string, string> = { ...seed.ids, key: seed.link.key, uid: op.path.startsWith('/c/') ? seed.calendar.uid : seed.event.uid };
  for (const p of op.pathParams) if (Array.isArray(p.schema.enum)) values[p.name] = String(p.schema.enum[0]);
  return fillPath(op.path, values);
}

/** A body of exactly `size` bytes in that content type: one long field. */
function bodyOf(contentType: string, size: number): { type: string; body: string } {
  if (contentType === 'application/json') return { type: contentType, body: `{"title":"${'x'.repeat(size - 12)}"}` };
  if (contentType === 'application/x-www-form-urlencoded') return { type: contentType, body: `title=${'x'.repeat(size - 6)}` };
  const head = '--LimitBoundary\r\nContent-Disposition: form-data; name="title"\r\n\r\n';
  const tail = '\r\n--LimitBoundary--\r\n';
  return { type: 'multipart/form-data; boundary=LimitBoundary', body: head + 'x'.repeat(size - head.length - tail.length) + tail };
}

interface Answer {
  status: number;
  body: string;
}

/** A request over a raw connection: the body declared or chunked; an answer that comes while the body is still going out is still read. */
function send(method: string, path: string, type: string, body: string, chunked: boolean): Promise<Answer> {
  const url = new URL(gw.baseUrl + path);
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: url.hostname,
        port: url.port,
        path: url.pathname,
        method,
        headers: {
          Authorization: `Bearer ${seed.team.token}`,
          Accept: 'application/json',
          'Content-Type': type,
          ...(chunked ? { 'Transfer-Encoding': 'chunked' } : { 'Content-Length': Buffer.byteLength(body) }),
        },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (d) => (text += d));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
        res.on('error', reject);
      },
    );
    req.on('error', (err) => (req.writableFinished ? undefined : reject(err)));
    if (chunked) {
      for (let i = 0; i < body.length; i += 16 * KiB) req.write(body.slice(i, i + 16 * KiB));
      req.end();
    } else req.end(body);
  });
}

it('knows the limit of every operation that takes a body', () => {
  expect(withBody.length).toBeGreaterThan(15);
  expect(withBody.filter((op) => limitOf(op) === undefined).map((op) => op.key)).toEqual([]);
});

it("answers 413 {\"message\"} naming the limit, in every content type, declared or chunked, and stores nothing", async () => {
  const before = await teamDigest(gw.db, seed.team.teamId);
  const wrong: string[] = [];
  for (const op of withBody) {
    const limit = limitOf(op) as number;
    for (const contentType of op.body?.contentTypes ?? []) {
      for (const chunked of [false, true]) {
        const { type, body } = bodyOf(contentType, limit + 1);
        const res = await send(op.method, pathOf(op), type, body, chunked);
        // The answer says what is accepted: the endpoint's own limit.
        const stated = limit % (1024 * 1024) === 0 ? `${limit / (1024 * 1024)} MB` : `${limit / KiB} KB`;
        const ok = res.status === 413 && JSON.stringify(JSON.parse(res.body)) === JSON.stringify({ message: `The request body is larger than this endpoint takes: at most ${stated}.` });
        if (!ok) wrong.push(`${op.key} ${contentType}${chunked ? ' chunked' : ''}: ${res.status} ${res.body.slice(0, 100)}`);
        // The answer is in the document too.
        if (!op.statuses.includes(413)) wrong.push(`${op.key}: 413 is not documented`);
      }
    }
  }
  expect(wrong).toEqual([]);
  expect(await teamDigest(gw.db, seed.team.teamId)).toBe(before);
});

it('reads a body exactly at the limit (the limit is where docs/security.md says)', async () => {
  const wrong: string[] = [];
  for (const op of withBody) {
    const limit = limitOf(op) as number;
    const contentType = op.body?.contentTypes[0] as string;
    const { type, body } = bodyOf(contentType, limit);
    const res = await send(op.method, pathOf(op), type, body, false);
    if (res.status === 413 || res.status >= 500) wrong.push(`${op.key} ${contentType}: ${res.status} ${res.body.slice(0, 100)}`);
  }
  expect(wrong).toEqual([]);
});

it('a request head over 16 KiB is refused by Node itself (431) before any of our code', async () => {
  const long = await fetch(`${gw.baseUrl}/api/events?search=${'x'.repeat(20 * KiB)}`, { headers: { Authorization: `Bearer ${seed.team.token}` } });
  expect(long.status).toBe(431);
  const header = await fetch(`${gw.baseUrl}/healthz`, { headers: { 'X-Padding': 'x'.repeat(20 * KiB) } });
  expect(header.status).toBe(431);
  expect((await fetch(`${gw.baseUrl}/healthz`)).status).toBe(200);
});

it('a public form with more fields than any form has is a 413 naming the limit, not a 500', async () => {
  const fields = new URLSearchParams(Array.from({ length: 25 }, (_, i): [string, string] => [`f${i}`, 'x']));
  fields.set('name', 'Ann');
  for (const path of [`/e/${seed.event.uid}/rsvp`, `/e/${seed.event.uid}/reply`, `/e/${seed.event.uid}/unlock`, `/c/${seed.calendar.uid}/subscribe/google`]) {
    const res = await send('POST', path, 'application/x-www-form-urlencoded', fields.toString(), false);
    expect([path, res.status, JSON.parse(res.body)]).toEqual([path, 413, { message: 'The form has more fields than this endpoint takes: at most 20.' }]);
  }
});

it('takes JSON in UTF-8 only: UTF-7 or UTF-16 is a 415, and nothing is stored', async () => {
  const before = await teamDigest(gw.db, seed.team.teamId);
  for (const charset of ['utf-7', 'utf-16le', 'UTF-16']) {
    const body = Buffer.from(JSON.stringify({ name: '+ADw-b+AD4-utf7+ADw-/b+AD4-', timezone: 'UTC' }), charset === 'utf-7' ? 'latin1' : 'utf16le');
    const res = await send('POST', '/api/calendars', `application/json; charset=${charset}`, body.toString('latin1'), false);
    expect([charset, res.status, JSON.parse(res.body)]).toEqual([charset, 415, { message: 'Unsupported content type: send a UTF-8 encoded body.' }]);
  }
  const form = await send('POST', `/e/${seed.event.uid}/rsvp`, 'application/json; charset=utf-7', '{"name":"+ADw-b+AD4-"}', false);
  expect(form.status).toBe(415);
  expect(await teamDigest(gw.db, seed.team.teamId)).toBe(before);
});

it('closes the connection after refusing a submission whose declared size is over the limit', async () => {
  const { port, hostname } = new URL(gw.baseUrl);
  const socket = (await import('node:net')).connect(Number(port), hostname);
  let answer = '';
  socket.on('data', (d) => (answer += d));
  const closed = new Promise<void>((resolve) => socket.on('close', () => resolve()));
  socket.write(`POST /s/${seed.link.key} HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: ${100 * KiB}\r\n\r\ntitle=only-a-start`);
  await closed;
  // One answer, the 413, and the connection closed by the server without the rest of the body.
  expect(answer.match(/HTTP\/1\.1 \d{3}/g)).toEqual(['HTTP/1.1 413']);
  expect(answer).toContain('Connection: close');
});
