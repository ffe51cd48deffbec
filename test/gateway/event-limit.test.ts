import { startGateway, type TestGateway } from '../helpers/gateway';

let gw: TestGateway;

beforeAll(async () => {
  gw = await startGateway();
});
afterAll(() => gw.close());

const event = (i: number) => ({ title: `E${i}`, date_start: '2026-05-01 10:00', date_end: '2026-05-01 11:00', timezone: 'UTC' });

async function teamWithCalendar(opts: Parameters<TestGateway['newTeam']>[0]) {
  const team = await gw.newTeam(opts);
  const cal = (await team.api.post('/api/calendars', { name: 'C', timezone: 'UTC' })).body.data;
  return { team, path: `/api/calendars/${cal.public_id}/events` };
}

describe('the monthly event limit', () => {
  it('answers 409 with the event-limit body once the limit is reached', async () => {
    gw.clock.set('2026-05-10T12:00:00Z');
    const { team, path } = await teamWithCalendar({ plan: 'free', eventLimit: 2 });
    expect((await team.api.post(path, event(1))).status).toBe(200);
    expect((await team.api.post('/api/events', { title: 'simple', start: '2026-05-02 10:00' })).status).toBe(200);
    const res = await team.api.post(path, event(3));
    expect(res.status).toBe(409);
    expect(res.body).toEqual({
      message: expect.any(String),
      current: 2,
      limit: 2,
      remaining: 0,
      would_exceed_by: 1,
      is_unlimited: false,
      limit_type: 'monthly',
    });
    const count = await gw.db('events').where({ team_id: team.teamId }).count<{ count: number }[]>('* as count');
    expect(count[0].count).toBe(2);
  });

  it('does not give slots back on delete, and starts afresh next month (UTC)', async () => {
    gw.clock.set('2026-05-31T23:59:00Z');
    const { team, path } = await teamWithCalendar({ eventLimit: 1 });
    const first = (await team.api.post(path, event(1))).body.data;
    await team.api.delete(`/api/events/${first.public_id}`);
    expect((await team.api.post(path, event(2))).status).toBe(409);
    gw.clock.set('2026-06-01T00:00:01Z');
    expect((await team.api.post(path, event(3))).status).toBe(200);
    const account = await team.api.get('/api/account');
    expect(account.body.data.usage).toEqual({ period: '2026-06', current: 1, limit: 1, remaining: 0, is_unlimited: false, limit_type: 'monthly' });
  });

  it('uses the plan limit when there is no override (free: 50)', async () => {
    gw.clock.set('2026-05-10T12:00:00Z');
    const team = await gw.newTeam({ plan: 'free' });
    const account = await team.api.get('/api/account');
    expect(account.body.data.plan).toEqual({ id: 'free', name: 'Free', monthly_event_limit: 50 });
    expect(account.body.data.usage).toMatchObject({ current: 0, limit: 50, remaining: 50, is_unlimited: false });
  });

  it('holds under concurrency: limit 5, 20 simultaneous creates, exactly 5 succeed', async () => {
    gw.clock.set('2026-05-10T12:00:00Z');
    const { team, path } = await teamWithCalendar({ eventLimit: 5 });
    const results = await Promise.all(Array.from({ length: 20 }, (_, i) => team.api.post(path, event(i))));
    const statuses = results.map((r) => r.status);
    expect(statuses.filter((s) => s === 200)).toHaveLength(5);
    expect(statuses.filter((s) => s === 409)).toHaveLength(15);
    const count = await gw.db('events').where({ team_id: team.teamId }).count<{ count: number }[]>('* as count');
    expect(count[0].count).toBe(5);
    for (const r of results.filter((x) => x.status === 409)) expect(r.body).toMatchObject({ current: 5, limit: 5, remaining: 0, would_exceed_by: 1 });
  });

  it('a failed create (taken short link) does not use up a slot', async () => {
    gw.clock.set('2026-05-10T12:00:00Z');
    const { team, path } = await teamWithCalendar({ eventLimit: 1 });
    await team.api.post('/api/calendars', { name: 'Holder', timezone: 'UTC', short_link: `taken-${team.teamId}` });
    expect((await team.api.post(path, { ...event(1), short_link: `taken-${team.teamId}` })).status).toBe(422);
    expect((await team.api.post(path, event(2))).status).toBe(200);
  });

  it('never limits the unlimited plan', async () => {
    gw.clock.set('2026-05-10T12:00:00Z');
    const { team, path } = await teamWithCalendar({ plan: 'unlimited' });
    const results = await Promise.all(Array.from({ length: 10 }, (_, i) => team.api.post(path, event(i))));
    expect(results.every((r) => r.status === 200)).toBe(true);
    const account = await team.api.get('/api/account');
    expect(account.body.data.usage).toMatchObject({ current: 10, limit: null, remaining: null, is_unlimited: true });
  });
});
