import { startGateway, type TestGateway } from '../helpers/gateway';
import { waitFor } from '../helpers/wait';

let a: TestGateway;
let b: TestGateway;

beforeAll(async () => {
  [a, b] = await Promise.all([startGateway(), startGateway()]);
  // the caches switch on once each gateway's invalidation subscription is confirmed
  await waitFor(() => a.caches.events.isLive && b.caches.events.isLive, { what: 'live caches' });
});
afterAll(async () => {
  await Promise.all([a.close(), b.close()]);
});

const body = { title: 'Cached', date_start: '2026-07-14 13:00', date_end: '2026-07-14 14:00', timezone: 'UTC' };

/** Reads until the second gateway answers what the first one wrote (pub/sub is milliseconds). */
const soon = { timeoutMs: 2000 };

describe('read caches across gateway processes', () => {
  it('an update or delete through one gateway is seen through the other', async () => {
    const team = await a.newTeam();
    const viaB = b.anon.as(team.token);
    const cal = (await team.api.post('/api/calendars', { name: 'C', timezone: 'UTC' })).body.data;
    const evt = (await team.api.post(`/api/calendars/${cal.public_id}/events`, body)).body.data;
    await waitFor(async () => (await viaB.get(`/api/events/${evt.public_id}`)).body.data?.title === 'Cached', soon);

    await team.api.put(`/api/calendars/${cal.public_id}/events/${evt.public_id}`, { ...body, title: 'Renamed' });
    await waitFor(async () => (await viaB.get(`/api/events/${evt.public_id}`)).body.data.title === 'Renamed', { ...soon, what: 'the update on the other gateway' });

    await team.api.put(`/api/calendars/${cal.public_id}`, { name: 'Calendar renamed', timezone: 'UTC' });
    await waitFor(async () => (await viaB.get(`/api/events/${evt.public_id}`)).body.data.calendar.name === 'Calendar renamed', soon);

    await team.api.delete(`/api/events/${evt.public_id}`);
    await waitFor(async () => (await viaB.get(`/api/events/${evt.public_id}`)).status === 404, { ...soon, what: 'the delete on the other gateway' });
  });

  it('reads its own writes in the same gateway at once', async () => {
    const team = await a.newTeam();
    const cal = (await team.api.post('/api/calendars', { name: 'C', timezone: 'UTC' })).body.data;
    const evt = (await team.api.post(`/api/calendars/${cal.public_id}/events`, body)).body.data;
    for (let i = 0; i < 5; i++) {
      expect((await team.api.get(`/api/events/${evt.public_id}`)).body.data.title).toBe(i === 0 ? 'Cached' : `v${i - 1}`);
      await team.api.put(`/api/calendars/${cal.public_id}/events/${evt.public_id}`, { ...body, title: `v${i}` });
    }
  });

  it("never serves a cached event to another team or under another calendar", async () => {
    const team = await a.newTeam();
    const other = await a.newTeam();
    const cal = (await team.api.post('/api/calendars', { name: 'C', timezone: 'UTC' })).body.data;
    const cal2 = (await team.api.post('/api/calendars', { name: 'C2', timezone: 'UTC' })).body.data;
    const evt = (await team.api.post(`/api/calendars/${cal.public_id}/events`, body)).body.data;
    expect((await team.api.get(`/api/events/${evt.public_id}`)).status).toBe(200); // now cached
    expect((await other.api.get(`/api/events/${evt.public_id}`)).status).toBe(404);
    expect((await team.api.get(`/api/calendars/${cal2.public_id}/events/${evt.public_id}`)).status).toBe(404);
  });
});
