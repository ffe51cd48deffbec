import { startGateway, type TestGateway } from '../helpers/gateway';
import { whenReady } from '../../shared/queues/redis';
import { TestRedisServer } from '../helpers/redis-server';
import { newLink, submitForm } from '../smart-links/helpers';

/**
 * Per-plan request limits (docs/api.md): the numbers live with the plans, so each test gets a
 * plan of its own with small limits. Counted in Redis, so every gateway shares them.
 */
let gw: TestGateway;
beforeAll(async () => {
  gw = await startGateway();
});
afterAll(() => gw.close());

describe('API request limits', () => {
  it('counts per token: headers on every answer, then 429 with Retry-After', async () => {
    const team = await gw.newTeam({ limits: { api_per_minute_token: 3, api_per_minute_team: 100 } });
    const seen = [];
    for (let i = 0; i < 3; i++) {
      const res = await team.api.get('/api/calendars');
      expect(res.status).toBe(200);
      seen.push([res.headers.get('x-ratelimit-limit'), res.headers.get('x-ratelimit-remaining')]);
    }
    expect(seen).toEqual([
      ['3', '2'],
      ['3', '1'],
      ['3', '0'],
    ]);
    const over = await team.api.get('/api/calendars');
    expect(over.status).toBe(429);
    expect(over.body).toEqual({ message: 'Too Many Attempts.' });
    expect(over.headers.get('x-ratelimit-limit')).toBe('3');
    expect(over.headers.get('x-ratelimit-remaining')).toBe('0');
    expect(Number(over.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(Number(over.headers.get('retry-after'))).toBeLessThanOrEqual(60);
    // Nothing is done past the limit: a refused create stores nothing.
    const refused = await team.api.post('/api/calendars', { name: 'Too many', timezone: 'UTC' });
    expect(refused.status).toBe(429);
    expect(await gw.db('calendars').where({ team_id: team.teamId }).count<{ count: number }[]>('* as count')).toEqual([{ count: 0 }]);
  });

  it('counts per team across its tokens, and each team apart from the others', async () => {
    const team = await gw.newTeam({ limits: { api_per_minute_token: 100, api_per_minute_team: 4 } });
    const second = (await team.api.post('/api/extension/token', {})).body.data.token as string;
    const other = team.api.as(second);
    // 1 (the token request) + 3 = the team's 4
    for (let i = 0; i < 3; i++) expect((await (i % 2 ? team.api : other).get('/api/calendars')).status).toBe(200);
    const res = await other.get('/api/calendars');
    expect(res.status).toBe(429);
    expect(res.headers.get('x-ratelimit-limit')).toBe('4');
    expect((await team.api.get('/api/account')).status).toBe(429);
    const neighbour = await gw.newTeam({ limits: { api_per_minute_token: 100, api_per_minute_team: 4 } });
    expect((await neighbour.api.get('/api/calendars')).status).toBe(200);
  });

  it('reports the limit nearest its end', async () => {
    const team = await gw.newTeam({ limits: { api_per_minute_token: 10, api_per_minute_team: 5 } });
    const res = await team.api.get('/api/calendars');
    expect([res.headers.get('x-ratelimit-limit'), res.headers.get('x-ratelimit-remaining')]).toEqual(['5', '4']);
  });

  it('leaves unlimited plans uncounted (no headers)', async () => {
    const team = await gw.newTeam({ plan: 'unlimited' });
    const res = await team.api.get('/api/calendars');
    expect(res.status).toBe(200);
    expect(res.headers.get('x-ratelimit-limit')).toBeNull();
  });

  it('each plan has its numbers in the plans table', async () => {
    const plans = await gw.db('plans').whereIn('id', ['free', 'pro', 'business', 'unlimited']).orderBy('monthly_event_limit').select('id', 'api_per_minute_token', 'api_per_minute_team', 'extractions_per_minute', 'smart_link_per_minute');
    expect(plans).toEqual([
      { id: 'free', api_per_minute_token: 60, api_per_minute_team: 120, extractions_per_minute: 10, smart_link_per_minute: 60 },
      { id: 'pro', api_per_minute_token: 600, api_per_minute_team: 1200, extractions_per_minute: 60, smart_link_per_minute: 600 },
      { id: 'business', api_per_minute_token: 3000, api_per_minute_team: 6000, extractions_per_minute: 300, smart_link_per_minute: 6000 },
      { id: 'unlimited', api_per_minute_token: null, api_per_minute_team: null, extractions_per_minute: null, smart_link_per_minute: null },
    ]);
  });
});

describe('extraction limit', () => {
  it('counts extractions per team beside the API limit', async () => {
    const team = await gw.newTeam({ limits: { extractions_per_minute: 2 } });
    const text = { text: 'Team lunch next Friday at noon at Luigi’s' };
    const first = await team.api.post('/api/events/extract', text);
    expect(first.status).toBe(202);
    expect([first.headers.get('x-ratelimit-limit'), first.headers.get('x-ratelimit-remaining')]).toEqual(['2', '1']);
    expect((await team.api.post('/api/events/extract', text)).status).toBe(202);
    const over = await team.api.post('/api/events/extract', text);
    expect(over.status).toBe(429);
    expect(Number(over.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(await gw.db('extractions').where({ team_id: team.teamId }).count<{ count: number }[]>('* as count')).toEqual([{ count: 2 }]);
    // the rest of the API still answers
    expect((await team.api.get('/api/calendars')).status).toBe(200);
  });
});

describe('smart-link limit', () => {
  it('unlimited plans are not counted on the ingest path', async () => {
    const team = await gw.newTeam({ plan: 'unlimited' });
    const { link } = await newLink(gw, team);
    const res = await submitForm(link.url, { title: 'Call', start: '2030-01-01 10:00' });
    expect(res.status).toBe(202);
    expect(res.headers.get('x-ratelimit-limit')).toBeNull();
  });
});

describe('when Redis is away', () => {
  it('the API keeps answering reads under a stricter count of its own, carried into Redis when it is back', async () => {
    const redis = await TestRedisServer.start();
    const away = await startGateway({ REDIS_URL: redis.url });
    try {
      const team = await away.newTeam({ limits: { api_per_minute_token: 8, api_per_minute_team: 100 } });
      expect((await team.api.get('/api/calendars')).headers.get('x-ratelimit-remaining')).toBe('7');
      await redis.kill();
      // Reads still work, limited by this process alone to a quarter of the limit (2 of 8):
      // gateways counting apart must not add up to more than the shared limit.
      const reads = [];
      for (let i = 0; i < 3; i++) reads.push((await team.api.get('/api/calendars')).status);
      expect(reads).toEqual([200, 200, 429]);
      // Redis is back (with what it had): the two reads allowed meanwhile count there too.
      await redis.startProcess();
      await whenReady(away.redis, 10_000);
      const back = await team.api.get('/api/calendars');
      expect([back.status, back.headers.get('x-ratelimit-remaining')]).toEqual([200, '4']);
      const rest = [];
      for (let i = 0; i < 5; i++) rest.push((await team.api.get('/api/calendars')).status);
      expect(rest).toEqual([200, 200, 200, 200, 429]);
    } finally {
      await away.close();
      await redis.stop();
    }
  });

  it('the unlock limit checks no more guesses of a burst than a quarter of its five (one), counted per process', async () => {
    const redis = await TestRedisServer.start();
    const away = await startGateway({ REDIS_URL: redis.url });
    try {
      const team = await away.newTeam();
      const cal = (await team.api.post('/api/calendars', { name: 'Away', timezone: 'UTC' })).body.data;
      const created = await team.api.post(`/api/calendars/${cal.public_id}/events`, { title: 'Locked', date_start: '2030-05-01 19:00', date_end: '2030-05-01 20:00', timezone: 'UTC', access_code: 'sesame-42' });
      expect(created.status).toBe(200);
      const e = created.body.data;
      await redis.kill();
      const burst = await Promise.all(Array.from({ length: 20 }, (_, i) => away.anon.post(`/e/${e.uid}/unlock`, { access_code: `wrong-${i}` })));
      const statuses = burst.map((res) => res.status);
      expect(statuses.filter((s) => s === 403)).toHaveLength(1);
      expect(statuses.filter((s) => s === 429)).toHaveLength(19);
      const right = await away.anon.post(`/e/${e.uid}/unlock`, { access_code: 'sesame-42' });
      expect(right.status).toBe(429);
      expect(Number(right.headers.get('retry-after'))).toBeGreaterThan(0);
    } finally {
      await away.close();
      await redis.stop();
    }
  });
});
