import { startGateway, type TestGateway } from '../helpers/gateway';
import { OpenApiConformance } from '../helpers/openapi-conformance';

let gw: TestGateway;

beforeAll(async () => {
  gw = await startGateway();
});
afterAll(() => gw.close());

describe('health, docs and unknown paths', () => {
  it('answers /healthz and /readyz', async () => {
    expect((await gw.anon.get('/healthz')).body).toEqual({ status: 'ok' });
    const ready = await gw.anon.get('/readyz');
    expect(ready.status).toBe(200);
    expect(ready.body).toEqual({ status: 'ok', checks: { postgres: 'ok', redis: 'ok' } });
  });

  it('serves robots.txt: pages may be indexed, the API and personal addresses not', async () => {
    const res = await fetch(`${gw.baseUrl}/robots.txt`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/plain/);
    const lines = (await res.text()).split('\n');
    expect(lines[0]).toBe('User-agent: *');
    expect(lines).toEqual(expect.arrayContaining(['Disallow: /api/', 'Disallow: /s/', 'Disallow: /c/*/feeds/']));
    expect(lines.some((l) => l === 'Disallow: /' || l.startsWith('Disallow: /e/ ') || l === 'Disallow: /e/')).toBe(false);
  });

  it('tags every response with a request id, keeping a sane incoming one', async () => {
    const own = await gw.anon.get('/healthz', { headers: { 'X-Request-Id': 'trace-abc-123' } });
    expect(own.headers.get('x-request-id')).toBe('trace-abc-123');
    const generated = await gw.anon.get('/healthz', { headers: { 'X-Request-Id': 'bad id with spaces' } });
    expect(generated.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('serves an OpenAPI 3.1 document covering every route', async () => {
    const res = await gw.anon.get('/docs.openapi');
    expect(res.status).toBe(200);
    const doc = res.body;
    expect(doc.openapi).toBe('3.1.0');
    expect(doc.servers).toEqual([{ url: gw.baseUrl }]);
    const documented = Object.entries<Record<string, unknown>>(doc.paths).flatMap(([p, methods]) => Object.keys(methods).map((m) => `${m.toUpperCase()} ${p}`));
    for (const op of [
      'GET /api/calendars',
      'POST /api/calendars',
      'GET /api/calendars/{cal}',
      'PUT /api/calendars/{cal}',
      'DELETE /api/calendars/{cal}',
      'GET /api/calendars/{cal}/events',
      'POST /api/calendars/{cal}/events',
      'GET /api/calendars/{cal}/events/{evt}',
      'PUT /api/calendars/{cal}/events/{evt}',
      'DELETE /api/calendars/{cal}/events/{evt}',
      'GET /api/events',
      'POST /api/events',
      'GET /api/events/{evt}',
      'DELETE /api/events/{evt}',
      'GET /api/account',
      'POST /api/extension/token',
      'DELETE /api/extension/token',
    ]) {
      expect(documented).toContain(op);
    }
    const create = doc.paths['/api/calendars/{cal}/events'].post;
    expect(Object.keys(create.responses).sort()).toEqual(['200', '400', '401', '403', '404', '408', '409', '413', '415', '422', '429', '503']);
    expect(create.requestBody.content['application/json'].schema.required).toEqual(['title', 'date_start', 'date_end', 'timezone']);
    expect(create.requestBody.required).toBe(true);
    // Every field optional: an empty POST takes the defaults, so the body may be left out.
    expect(doc.paths['/api/calendars/{cal}/events/{evt}/signed-url'].post.requestBody.required).toBe(false);
    // Ids in paths are documented with their form, so path templates never overlap for tools that match them.
    expect(create.parameters.find((p: { name: string }) => p.name === 'cal').schema.pattern).toBe('^cal_[0-9A-Za-z]{16}$');
    expect(doc.paths['/c/{uid}'].get.parameters[0].schema.pattern).toBe('^[0-9A-Za-z]{16}$');
    // OPTIONS is documented on every path, a license and every tag with its description.
    expect(Object.values(doc.paths).every((ops) => 'options' in (ops as object))).toBe(true);
    expect(doc.info.license).toEqual({ name: 'MIT', identifier: 'MIT' });
    expect(doc.tags.every((t: { description?: string }) => t.description)).toBe(true);
    expect(create.security).toEqual([{ bearerAuth: [] }, { sessionCookie: [] }]);
    expect(Object.keys(create.responses['200'].headers)).toEqual(['X-RateLimit-Limit', 'X-RateLimit-Remaining']);
    expect(Object.keys(create.responses['429'].headers)).toEqual(['X-RateLimit-Limit', 'X-RateLimit-Remaining', 'Retry-After']);
  });

  it('declares on every operation exactly the path parameters its path names', () => {
    expect(gw.conformance.pathParameterProblems()).toEqual([]);
    const broken = new OpenApiConformance({
      paths: { '/api/things/{thing}': { get: { parameters: [{ name: 'thing', in: 'path' }, { name: 'other', in: 'path' }], responses: {} }, post: { responses: {} } } },
    });
    expect(broken.pathParameterProblems()).toEqual([
      'GET /api/things/{thing} declares path parameters [other, thing], its path names [thing]',
      'POST /api/things/{thing} declares path parameters [], its path names [thing]',
    ]);
  });

  it('the response checker used by every test rejects a body that breaks the document', () => {
    const problems = gw.conformance.check('GET', '/api/calendars', 200, 'application/json', { data: [{ uid: 1 }] });
    expect(problems.length).toBeGreaterThan(0);
    expect(gw.conformance.check('GET', '/api/calendars', 418, 'application/json', {})).toEqual([
      'GET /api/calendars answered 418, which the document does not list',
    ]);
    expect(gw.conformance.check('GET', '/api/nowhere', 200, null, '')).toEqual(['GET /api/nowhere is not in the OpenAPI document']);
    expect(gw.conformance.check('GET', '/c/AAAAAAAAAAAAAAAA.ics', 200, 'text/html; charset=utf-8', '')).toEqual([
      'GET /c/{uid}.ics 200 answered text/html; the document lists text/calendar',
    ]);
  });

  it('serves a landing page at /: what this is, the reference, how to get a token, and the status', async () => {
    const page = await gw.anon.get('/', { headers: { Accept: 'text/html' } });
    expect([page.status, page.headers.get('content-type')]).toEqual([200, 'text/html; charset=utf-8']);
    expect(page.text).toContain('<h1>Calendar service</h1>');
    expect(page.text).toContain('<a href="/docs">API reference</a>');
    expect(page.text).toContain('npm run --silent admin -- create-team');
    expect(page.text).toContain('<b class="ok">Ready</b>');
    expect(page.headers.get('content-security-policy')).toContain("default-src 'none'");
  });

  it('serves the interactive reference with local assets only', async () => {
    const page = await gw.anon.get('/docs');
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toMatch(/text\/html/);
    const srcs = [...page.text.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1]);
    expect(srcs.length).toBeGreaterThan(2);
    for (const src of srcs) {
      expect(src.startsWith('/docs/')).toBe(true);
      const asset = await fetch(gw.baseUrl + src);
      expect(asset.status).toBe(200);
    }
    const init = await (await fetch(`${gw.baseUrl}/docs/assets/init.js`)).text();
    expect(init).toContain("url: '/docs.openapi'");
    expect(init).not.toMatch(/https?:\/\//);
  });

  it('answers unknown paths with a JSON 404', async () => {
    const res = await gw.anon.get('/api/nothing-here', { unchecked: true });
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ message: 'Not found.' });
  });

  it('answers a method an existing path does not take with 405 and Allow', async () => {
    const team = await gw.newTeam();
    const patch = await team.api.request('PATCH', '/api/events', { body: {}, unchecked: true });
    expect(patch.status).toBe(405);
    expect(patch.headers.get('allow')).toBe('GET, HEAD, POST');
    expect(patch.body).toEqual({ message: 'This address does not take PATCH: use GET, HEAD, POST.' });
    const cal = (await team.api.post('/api/calendars', { name: 'Main', timezone: 'UTC' })).body.data;
    const post = await team.api.request('POST', `/api/calendars/${cal.public_id}`, { body: {}, unchecked: true });
    expect([post.status, post.headers.get('allow')]).toEqual([405, 'DELETE, GET, HEAD, PUT']);
    // Smart links take submissions by POST only; a browser on a public page gets a page.
    const get = await gw.anon.get('/s/SomeKeyOfALink', { unchecked: true });
    expect([get.status, get.headers.get('allow')]).toEqual([405, 'POST']);
    const page = await fetch(`${gw.baseUrl}/e/someEventUid01`, { method: 'DELETE', headers: { Accept: 'text/html' } });
    expect([page.status, page.headers.get('allow'), page.headers.get('content-type')]).toEqual([405, 'GET, HEAD', 'text/html; charset=utf-8']);
    expect(await page.text()).toContain('This address does not take DELETE');
    // Unknown paths stay 404, whatever the method.
    expect((await team.api.request('PATCH', '/api/nothing-here', { unchecked: true })).status).toBe(404);
  });

  it('answers OPTIONS on a path it serves with 204 and Allow, no body, no token needed', async () => {
    const events = await fetch(`${gw.baseUrl}/api/events`, { method: 'OPTIONS' });
    expect([events.status, events.headers.get('allow'), events.headers.get('content-type'), await events.text()]).toEqual([204, 'GET, HEAD, POST', null, '']);
    const cal = await fetch(`${gw.baseUrl}/api/calendars/cal_AAAAAAAAAAAAAAAA`, { method: 'OPTIONS' });
    expect([cal.status, cal.headers.get('allow')]).toEqual([204, 'DELETE, GET, HEAD, PUT']);
    const invites = await fetch(`${gw.baseUrl}/api/calendars/cal_A/events/evt_B/invites/inv_C`, { method: 'OPTIONS' });
    expect([invites.status, invites.headers.get('allow')]).toEqual([204, 'DELETE']);
    const page = await fetch(`${gw.baseUrl}/e/someEventUid01`, { method: 'OPTIONS' });
    expect([page.status, page.headers.get('allow'), await page.text()]).toEqual([204, 'GET, HEAD', '']);
    // A trailing slash is the same path; a parameter may share its segment with a suffix.
    const slash = await fetch(`${gw.baseUrl}/api/events/`, { method: 'OPTIONS' });
    expect([slash.status, slash.headers.get('allow')]).toEqual([204, 'GET, HEAD, POST']);
    const feed = await fetch(`${gw.baseUrl}/c/someCalendarUid/feeds/someToken.ics`, { method: 'OPTIONS' });
    expect([feed.status, feed.headers.get('allow')]).toEqual([204, 'GET, HEAD']);
    // Unknown paths stay a JSON 404.
    const unknown = await fetch(`${gw.baseUrl}/api/nothing-here`, { method: 'OPTIONS', headers: { Accept: 'application/json' } });
    expect([unknown.status, await unknown.json()]).toEqual([404, { message: 'Not found.' }]);
  });
});
