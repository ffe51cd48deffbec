import type { TestGateway } from '../helpers/gateway';
import { crash, type GatewayProcess, spawnGateway } from '../helpers/service-processes';
import { dropPrefix, fillPath, type Operation, operations, securityPrefix, type Seeded, seedTeam, startSecurityGateway } from './fixtures';

/**
 * Arrays far over their maximum: every operation whose body declares an array (with a
 * maximum) is sent one of 100,000 items, four at once, by any token with made-up ids. Each
 * is refused for its size before any item is looked at (a short 422 naming the limit), and
 * the gateway, a process of its own, keeps answering /healthz promptly meanwhile: probes are
 * counted, not timed.
 */
jest.setTimeout(120_000);

const NAME = 'arrays';
const ITEMS = 100_000;
let gw: TestGateway;
let proc: GatewayProcess;
let seed: Seeded;

beforeAll(async () => {
  gw = await startSecurityGateway(NAME);
  seed = await seedTeam(gw, await gw.newTeam());
  proc = await spawnGateway({ QUEUE_PREFIX: securityPrefix(NAME), LOG_LEVEL: 'silent' });
});
afterAll(async () => {
  if (proc) await crash(proc);
  if (gw) await dropPrefix(gw.redis, securityPrefix(NAME));
  await gw?.close();
});

type JsonSchema = { type?: string; properties?: Record<string, JsonSchema>; items?: JsonSchema; maxItems?: number };

/** The declared arrays of a body schema that have a maximum: their paths and limits. */
function arraysOf(schema: JsonSchema, path: string[] = []): Array<{ path: string[]; max: number }> {
  const found: Array<{ path: string[]; max: number }> = [];
  if (schema.type === 'array' && schema.maxItems !== undefined) found.push({ path, max: schema.maxItems });
  for (const [key, child] of Object.entries(schema.properties ?? {})) found.push(...arraysOf(child, [...path, key]));
  return found;
}

const bodyWith = (path: string[], value: unknown): unknown => (path.length ? { [path[0]]: bodyWith(path.slice(1), value) } : value);

function pathOf(op: Operation): string {
  const values: Record<string, string> = { ...seed.ids, key: seed.link.key, uid: seed.event.uid };
  for (const p of op.pathParams) if (Array.isArray(p.schema.enum)) values[p.name] = String(p.schema.enum[0]);
  return fillPath(op.path, values);
}

it('refuses every oversized array by its size, in a short answer, while /healthz keeps answering', async () => {
  const targets = operations(gw.openapi)
    .filter((op) => op.body?.contentTypes.includes('application/json'))
    .flatMap((op) => arraysOf(op.body?.schema as JsonSchema).map((array) => ({ op, ...array })));
  expect(targets.map((t) => `${t.op.key} ${t.path.join('.')}`)).toContain('POST /api/calendars/{cal}/events/{evt}/invites invitees');

  let probing = true;
  let answered = 0;
  let late = 0;
  const probes = (async () => {
    while (probing) {
      try {
        const res = await fetch(`${proc.baseUrl}/healthz`, { signal: AbortSignal.timeout(1000) });
        if (res.ok) answered++;
        else late++;
      } catch {
        late++;
      }
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  })();

  const wrong: string[] = [];
  for (const { op, path, max } of targets) {
    const body = JSON.stringify(bodyWith(path, Array.from({ length: ITEMS }, () => ({}))));
    const answers = await Promise.all(
      Array.from({ length: 4 }, () =>
        fetch(proc.baseUrl + pathOf(op), {
          method: op.method,
          headers: { Authorization: `Bearer ${seed.team.token}`, 'Content-Type': 'application/json', Accept: 'application/json' },
          body,
        }).then(async (res) => ({ status: res.status, text: await res.text() })),
      ),
    );
    const field = path.join('.');
    const expected = `The ${field.replace(/_/g, ' ')} field must not have more than ${max} items (it has ${ITEMS}).`;
    for (const a of answers) {
      const parsed = JSON.parse(a.text) as { message?: string; errors?: Record<string, string[]> };
      if (a.status !== 422 || parsed.message !== expected || JSON.stringify(parsed.errors) !== JSON.stringify({ [field]: [expected] }) || a.text.length > 2000) {
        wrong.push(`${op.key} ${field}: ${a.status} ${a.text.slice(0, 200)}`);
      }
    }
  }
  probing = false;
  await probes;
  expect(wrong).toEqual([]);
  expect(answered).toBeGreaterThan(0);
  expect(late).toBe(0);
});

it('a 422 for many bad items names the first twenty fields and counts every error', async () => {
  const invitees = Array.from({ length: 500 }, (_, i) => ({ email: `not-an-address-${i}` }));
  const res = await gw.anon.as(seed.team.token).post(fillPath('/api/calendars/{cal}/events/{evt}/invites', seed.ids), { invitees });
  expect(res.status).toBe(422);
  expect(res.body.message).toBe('The invitees.0.email field must be a valid email address. (and 499 more errors)');
  expect(Object.keys(res.body.errors)).toHaveLength(20);
  expect(res.text.length).toBeLessThan(3000);
});
