import { startGateway, type TestGateway } from '../helpers/gateway';
import { waitFor } from '../helpers/wait';

let gw: TestGateway;

beforeAll(async () => {
  gw = await startGateway();
});
afterAll(() => gw.close());

describe('bearer tokens', () => {
  it.each([
    ['no header', {}],
    ['empty bearer', { Authorization: 'Bearer ' }],
    ['unknown token', { Authorization: 'Bearer cst_000000000000000000000000000000000000000' }],
    ['wrong scheme', { Authorization: 'Basic dXNlcjpwYXNz' }],
  ])('answers 401 with WWW-Authenticate for %s', async (_name, headers) => {
    const res = await gw.anon.get('/api/calendars', { headers });
    expect(res.status).toBe(401);
    expect(res.body).toEqual({ message: 'Unauthenticated.' });
    expect(res.headers.get('www-authenticate')).toBe('Bearer');
  });

  it('routes API paths case-insensitively, as Express matches routes', async () => {
    const team = await gw.newTeam();
    // Plain fetch: the OpenAPI-checking client knows only the documented spelling.
    expect((await fetch(`${gw.baseUrl}/API/calendars`)).status).toBe(401);
    expect((await fetch(`${gw.baseUrl}/Api/Calendars`, { headers: { Authorization: `Bearer ${team.token}` } })).status).toBe(200);
  });

  it('accepts a valid token and records when it was used', async () => {
    const team = await gw.newTeam();
    expect((await team.api.get('/api/calendars')).status).toBe(200);
    // last_used_at is written off the request path; wait for it to land.
    let row: { last_used_at: string | null } | undefined;
    for (let i = 0; i < 50 && !row?.last_used_at; i++) {
      row = await gw.db('api_tokens').where({ user_id: team.userId }).first('last_used_at');
      if (!row?.last_used_at) await new Promise((r) => setImmediate(r));
    }
    expect(row?.last_used_at).not.toBeNull();
  });

  it('stores only a hash of the token', async () => {
    const team = await gw.newTeam();
    const rows = await gw.db('api_tokens').where({ user_id: team.userId });
    expect(JSON.stringify(rows)).not.toContain(team.token);
  });
});

describe('account and extension tokens', () => {
  it('GET /api/account shows the user, team, plan and usage', async () => {
    const team = await gw.newTeam({ plan: 'pro' });
    const res = await team.api.get('/api/account');
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({
      user: { email: team.email, id: expect.stringMatching(/^usr_/) },
      team: { id: expect.stringMatching(/^team_/) },
      plan: { id: 'pro', name: 'Pro', monthly_event_limit: 1000 },
      usage: { current: 0, limit: 1000, remaining: 1000, is_unlimited: false, limit_type: 'monthly' },
    });
  });

  it('issues an extension token that works until it is revoked', async () => {
    const team = await gw.newTeam();
    const issued = await team.api.post('/api/extension/token');
    expect(issued.status).toBe(200);
    expect(issued.body.data.kind).toBe('extension');
    const ext = team.api.as(issued.body.data.token);
    expect((await ext.get('/api/account')).body.data.user.email).toBe(team.email);

    const revoked = await team.api.delete('/api/extension/token');
    expect(revoked.body).toEqual({ data: { revoked: 1 } });
    expect((await ext.get('/api/account')).status).toBe(401);
    // the API token is untouched, and revoking again finds nothing
    expect((await team.api.get('/api/account')).status).toBe(200);
    expect((await team.api.delete('/api/extension/token')).body).toEqual({ data: { revoked: 0 } });
  });

  it('a revocation reaches every gateway process that cached the token', async () => {
    const other = await startGateway();
    try {
      await waitFor(() => other.caches.tokens.isLive, { what: 'a live token cache' });
      const team = await gw.newTeam();
      const token = (await team.api.post('/api/extension/token')).body.data.token;
      const here = gw.anon.as(token);
      const there = other.anon.as(token);
      // the other gateway has seen the token (and cached it once its subscription is live)
      await waitFor(async () => (await there.get('/api/account')).status === 200 && (await there.get('/api/account')).status === 200);
      expect((await here.delete('/api/extension/token')).body.data.revoked).toBe(1);
      expect((await here.get('/api/account')).status).toBe(401);
      await waitFor(async () => (await there.get('/api/account')).status === 401, { what: 'the other gateway to drop the token', timeoutMs: 2000 });
    } finally {
      await other.close();
    }
  });

  it("revokes only the calling user's extension tokens", async () => {
    const a = await gw.newTeam();
    const b = await gw.newTeam();
    const extB = b.api.as((await b.api.post('/api/extension/token')).body.data.token);
    await a.api.post('/api/extension/token');
    expect((await a.api.delete('/api/extension/token')).body.data.revoked).toBe(1);
    expect((await extB.get('/api/account')).status).toBe(200);
  });
});
