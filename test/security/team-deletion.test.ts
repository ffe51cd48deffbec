import { createSession, csrfTokenOf, sessionCookie } from '../../services/gateway/http/sessions';
import { insertTokenRow } from '../../shared/accounts/accounts.repository';
import { purgeDeletedTeams } from '../../services/smart-link-worker/team-purge';
import type { ApiClient } from '../helpers/api-client';
import type { TestGateway } from '../helpers/gateway';
import { dropPrefix, securityPrefix, type Seeded, seedTeam, startSecurityGateway, teamCounts, teamDigest } from './fixtures';

/**
 * An owner deletes their team: from the answer on, nothing of it works or answers (its
 * people's tokens and sessions, its pages, feeds, forms and short links), its queued emails
 * are not sent, and only an owner who names the team can do it. The purge then deletes every
 * row the team had, and nothing of another team.
 */
const NAME = 'team_deletion';
let gw: TestGateway;
let victim: Seeded;
let bystander: Seeded;

const count = async (table: string, where: Record<string, unknown>) => Number((await gw.db(table).where(where).count('* as n').first())?.n);
const teamName = async (teamId: number) => (await gw.db('teams').first('name').where({ id: teamId })).name as string;

/** A token and a session of a new person of the team with this role. */
async function person(seeded: Seeded, role: 'member' | 'admin' | 'owner'): Promise<{ token: ApiClient; session: ApiClient }> {
  const invited = await seeded.team.api.post('/api/members', { email: `${role}-${Date.now()}-${Math.random().toString(36).slice(2, 8)}@example.com`, role });
  if (invited.status !== 201 && invited.status !== 200) throw new Error(`member: ${invited.status} ${invited.text}`);
  const user = await gw.db('users').first('id').where({ uid: invited.body.data.id.slice('usr_'.length) });
  const { token } = await insertTokenRow(gw.db, { userId: user.id, teamId: seeded.team.teamId, kind: 'api', name: role });
  const session = await createSession(gw.db, { userId: user.id, teamId: seeded.team.teamId }, new Date());
  return {
    token: gw.anon.as(token),
    session: gw.anon.asSession({ cookie: `${sessionCookie(gw.config).name}=${session.secret}`, csrf: csrfTokenOf(gw.config.appKey, session.secret) }),
  };
}

beforeAll(async () => {
  gw = await startSecurityGateway(NAME);
  const [a, b] = await Promise.all([gw.newTeam({ plan: 'unlimited' }), gw.newTeam({ plan: 'unlimited' })]);
  [victim, bystander] = await Promise.all([seedTeam(gw, a), seedTeam(gw, b)]);
}, 60_000);
afterAll(async () => {
  if (gw) await dropPrefix(gw.redis, securityPrefix(NAME));
  await gw?.close();
});

describe('deleting a team', () => {
  it('is refused to an admin and a member, and to an owner who does not name the team, changing nothing', async () => {
    const before = await teamDigest(gw.db, victim.team.teamId);
    const name = await teamName(victim.team.teamId);
    for (const role of ['member', 'admin'] as const) {
      const { token, session } = await person(victim, role);
      for (const client of [token, session]) {
        const res = await client.delete('/api/account/team', { confirm: name });
        expect([res.status, res.body.message]).toEqual([403, `This needs the owner role in the team; yours is ${role}.`]);
      }
    }
    const wrong = await victim.team.api.delete('/api/account/team', { confirm: name.toUpperCase() });
    expect(wrong.status).toBe(422);
    expect(wrong.body.errors).toEqual({ confirm: ['Type the team’s name exactly, as it is, to delete it.'] });
    expect((await victim.team.api.delete('/api/account/team', {})).status).toBe(422);
    // The people made above are the only change.
    expect(await teamDigest(gw.db, victim.team.teamId)).not.toBe(before);
    expect((await victim.team.api.get('/api/account')).status).toBe(200);
  });

  it('stops everything of the team at once and leaves other teams as they were', async () => {
    const other = await teamDigest(gw.db, bystander.team.teamId);
    const ownerSession = victim.team.session;
    const second = await person(victim, 'owner');
    // Pages, feeds, forms and links that answer before.
    const publicPaths = [
      `/e/${victim.event.uid}`,
      `/e/${victim.event.uid}.ics`,
      `/e/${victim.event.uid}/google`,
      `/c/${victim.calendar.uid}`,
      `/c/${victim.calendar.uid}.ics`,
      `/c/${victim.calendar.uid}/feeds/${victim.feedToken}.ics`,
      `/l/${victim.event.short_link}`,
    ];
    const before = await Promise.all(publicPaths.map(async (p) => [p, (await fetch(`${gw.baseUrl}${p}`, { redirect: 'manual' })).status]));
    expect(before.filter(([, status]) => Number(status) >= 400)).toEqual([]);
    expect(await count('deliveries', { team_id: victim.team.teamId, status: 'queued' })).toBeGreaterThan(0);

    const res = await ownerSession.delete('/api/account/team', { confirm: await teamName(victim.team.teamId) });
    expect(res.status).toBe(202);
    expect(res.body.data).toEqual({ id: expect.stringMatching(/^team_/), deleted: true, purge_after: expect.any(String) });
    // The session's cookie is cleared in this browser.
    expect(res.headers.getSetCookie().join('\n')).toMatch(/Max-Age=0/);

    for (const client of [victim.team.api, ownerSession, second.token, second.session]) expect((await client.get('/api/account')).status).toBe(401);
    const after = await Promise.all(publicPaths.map(async (p) => [p, (await fetch(`${gw.baseUrl}${p}`, { redirect: 'manual' })).status]));
    // The single-event feed of a gone event answers an empty calendar (apps then drop it); everything else is gone.
    expect(Object.fromEntries(after)).toEqual(Object.fromEntries(publicPaths.map((p) => [p, p === `/e/${victim.event.uid}.ics` ? 200 : 404])));
    const form = await fetch(victim.link.url, { method: 'POST', headers: { 'Content-Type': 'application/x-www-form-urlencoded' }, body: 'title=After&start=2031-05-01+09:00' });
    expect(form.status).toBe(404);
    expect(await count('deliveries', { team_id: victim.team.teamId, status: 'queued' })).toBe(0);
    // Its people are gone, so their addresses are free for another team.
    expect(await count('users', { team_id: victim.team.teamId })).toBe(0);
    expect(await teamDigest(gw.db, bystander.team.teamId)).toBe(other);
    for (const p of [`/e/${bystander.event.uid}`, `/c/${bystander.calendar.uid}.ics`]) expect((await fetch(`${gw.baseUrl}${p}`)).status).toBe(200);
  });

  it('is purged after the delay: every row of the team goes, no row of another', async () => {
    const other = await teamDigest(gw.db, bystander.team.teamId);
    const { ms } = await gw.db('teams').first(gw.db.raw('extract(epoch FROM deleted_at) * 1000 AS ms')).where({ id: victim.team.teamId });
    // Not yet due: nothing of it is deleted. (Other files' deleted teams, due or not, share
    // the database: the counts are about this team's rows, not the purge's totals.)
    await purgeDeletedTeams(gw.db, new Date(Number(ms) - 1000));
    expect(await gw.db('teams').where({ id: victim.team.teamId }).first()).toBeDefined();
    expect(Object.values(await teamCounts(gw.db, victim.team.teamId)).some((n) => n > 0)).toBe(true);
    const done = await purgeDeletedTeams(gw.db, new Date());
    expect(done.teams).toBeGreaterThanOrEqual(1);
    expect(done.rows).toBeGreaterThan(0);
    expect(Object.entries(await teamCounts(gw.db, victim.team.teamId)).filter(([, n]) => n > 0)).toEqual([]);
    expect(await gw.db('teams').where({ id: victim.team.teamId }).first()).toBeUndefined();
    for (const table of ['webhooks', 'webhook_messages', 'analytics_daily', 'mail_suppressions']) {
      expect([table, await count(table, { team_id: victim.team.teamId })]).toEqual([table, 0]);
    }
    expect(await teamDigest(gw.db, bystander.team.teamId)).toBe(other);
  });

  it("drops the counts a purged team still had in memory, not the other teams' counts flushed with them", async () => {
    // An unlimited team's events are counted in memory and written in batches: one made just
    // before its team is deleted and purged is still in the batch that follows.
    const doomed = await gw.newTeam({ plan: 'unlimited' });
    const cal = (await doomed.api.post('/api/calendars', { name: 'Soon gone', timezone: 'UTC' })).body.data;
    expect((await doomed.api.post(`/api/calendars/${cal.public_id}/events`, { title: 'Last', date_start: '2031-01-01 10:00', date_end: '2031-01-01 11:00', timezone: 'UTC' })).status).toBe(200);
    const name = await teamName(doomed.teamId);
    expect((await doomed.api.delete('/api/account/team', { confirm: name })).status).toBe(202);
    expect((await purgeDeletedTeams(gw.db, new Date(Date.now() + 60_000))).teams).toBeGreaterThanOrEqual(1);
    const live = await gw.newTeam({ plan: 'unlimited' });
    const liveCal = (await live.api.post('/api/calendars', { name: 'Still here', timezone: 'UTC' })).body.data;
    expect((await live.api.post(`/api/calendars/${liveCal.public_id}/events`, { title: 'Counted', date_start: '2031-01-01 10:00', date_end: '2031-01-01 11:00', timezone: 'UTC' })).status).toBe(200);
    // Reading the account writes the batch, the purged team's count in it.
    const account = await live.api.get('/api/account');
    expect([account.status, account.body.data?.usage.current]).toEqual([200, 1]);
  });
});
