import type { AccountMailOutcome } from '../../services/mail-worker/account-mail';
import { mailWorker } from '../../services/mail-worker/mail.worker';
import type { MailJob } from '../../shared/queues/mail.job';
import type { MailOutcome } from '../../services/mail-worker/mail.processor';
import { startGateway, type TestGateway, type TestTeam } from '../helpers/gateway';
import { isolatedPrefix } from '../helpers/service-processes';
import { type SmtpSink, startSmtpSink } from '../helpers/smtp';
import { waitFor } from '../helpers/wait';
import { startWorker, type TestWorker } from '../helpers/workers';

/**
 * Dashboard accounts through the real API, with the mail worker sending to a real SMTP
 * server: emailed one-time links, sessions (cookie, CSRF, fixation, sign-out), passwords,
 * roles, API tokens and members.
 */
const prefix = isolatedPrefix('sessions');
let sink: SmtpSink;
let gw: TestGateway;
let worker: TestWorker<MailJob, MailOutcome>;
let team: TestTeam;

beforeAll(async () => {
  sink = await startSmtpSink();
  gw = await startGateway({ QUEUE_PREFIX: prefix });
  worker = await startWorker((ctx) => mailWorker(ctx), { QUEUE_PREFIX: prefix, SMTP_URL: sink.url, MAIL_RATE_PER_SECOND: '0', PUBLIC_BASE_URL: gw.baseUrl });
  team = await gw.newTeam();
});
afterAll(async () => {
  await worker?.close();
  await gw?.close();
  await sink?.close();
});
afterEach(() => gw.clock.reset());

let n = 0;
const address = (who: string) => `${who}-${process.env.TEST_RUN_ID ?? 'x'}-${++n}@people.example.test`;

/** The sign-in link of the newest message to `email`, as its text part shows it. */
async function linkFor(email: string, count = 1): Promise<string> {
  const mails = await waitFor(() => sink.for(email).length >= count && sink.for(email), { what: `message ${count} to ${email}` });
  const text = String(mails[count - 1].parsed.text);
  const url = text.split(/\s/).find((w) => w.includes('/app/sign-in#token='));
  if (!url) throw new Error(`no sign-in link in: ${text}`);
  return url;
}
const tokenOf = (link: string) => new URL(link).hash.slice('#token='.length);

interface Browserish {
  cookie: string;
  csrf: string;
}

/** Signs in with a link's token as a browser would: the cookie it is given, and the session's CSRF token. */
async function signInWith(token: string, brought?: string): Promise<{ status: number; session?: Browserish; setCookie: string; body: Record<string, unknown> }> {
  const res = await fetch(`${gw.baseUrl}/api/auth/sessions`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', ...(brought ? { Cookie: brought } : {}) },
    body: JSON.stringify({ token }),
  });
  const body = (await res.json()) as Record<string, unknown>;
  const setCookie = res.headers.get('set-cookie') ?? '';
  if (res.status !== 200) return { status: res.status, setCookie, body };
  const data = body.data as { csrf_token: string };
  return { status: 200, setCookie, body, session: { cookie: setCookie.split(';')[0], csrf: data.csrf_token } };
}

/** An API request made with a session, as the dashboard makes it. */
async function asSession(s: Browserish, method: string, path: string, body?: unknown, opts: { csrf?: string | null } = {}) {
  const headers: Record<string, string> = { Cookie: s.cookie, Accept: 'application/json' };
  const csrf = opts.csrf === undefined ? s.csrf : opts.csrf;
  if (csrf !== null) headers['X-CSRF-Token'] = csrf;
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  const res = await fetch(gw.baseUrl + path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : null, headers: res.headers };
}

async function signIn(email: string): Promise<Browserish> {
  const before = sink.for(email).length;
  expect((await gw.anon.post('/api/auth/sign-in-link', { email })).status).toBe(202);
  const signed = await signInWith(tokenOf(await linkFor(email, before + 1)));
  expect(signed.status).toBe(200);
  return signed.session as Browserish;
}

it('signs in from an emailed link, once; the cookie is HttpOnly and SameSite=Lax', async () => {
  expect((await gw.anon.post('/api/auth/sign-in-link', { email: team.email.toUpperCase() })).status).toBe(202);
  const link = await linkFor(team.email);
  expect(link.startsWith(`${gw.baseUrl}/app/sign-in#token=`)).toBe(true);
  const first = await signInWith(tokenOf(link));
  expect(first.status).toBe(200);
  expect(first.setCookie).toMatch(/^cs_session=css_[0-9A-Za-z]{40};/);
  expect(first.setCookie).toMatch(/HttpOnly/i);
  expect(first.setCookie).toMatch(/SameSite=Lax/i);
  expect(first.setCookie).toMatch(/Path=\//);
  const session = first.session as Browserish;
  const me = await asSession(session, 'GET', '/api/session');
  expect(me.status).toBe(200);
  expect(me.body.data.user).toMatchObject({ email: team.email, role: 'owner', has_password: false });
  expect(me.body.data.csrf_token).toBe(session.csrf);
  // The same link again, as a mail scanner or a second click would use it.
  const again = await signInWith(tokenOf(link));
  expect(again.status).toBe(401);
  expect(again.body.message).toMatch(/expired or was already used/);
});

it('answers the same for an address without an account, and sends it nothing', async () => {
  const nobody = address('nobody');
  const res = await gw.anon.post('/api/auth/sign-in-link', { email: nobody });
  expect(res.status).toBe(202);
  expect(res.body).toEqual({ data: { sent: true } });
  // No link was made for it, and nothing reached it by the time a later message did.
  expect(await gw.db('sign_in_links').where({ email: nobody }).first()).toBeUndefined();
  await signIn(team.email);
  expect(sink.for(nobody)).toHaveLength(0);
});

it('refuses a link after 15 minutes, a made-up token, and a token of the right shape', async () => {
  expect((await gw.anon.post('/api/auth/sign-in-link', { email: team.email })).status).toBe(202);
  const before = sink.for(team.email).length;
  const link = await linkFor(team.email, before);
  gw.clock.advance(15 * 60_000 + 1000);
  expect((await signInWith(tokenOf(link))).status).toBe(401);
  gw.clock.reset();
  expect((await signInWith('abc')).status).toBe(401);
  const [uid] = tokenOf(link).split('.');
  expect((await signInWith(`${uid}.${'A'.repeat(43)}`)).status).toBe(401);
});

it('needs the CSRF token for every change made with a session, not for reads', async () => {
  const s = await signIn(team.email);
  expect((await asSession(s, 'GET', '/api/calendars', undefined, { csrf: null })).status).toBe(200);
  const calendar = { name: 'Board', timezone: 'Europe/Paris' };
  const missing = await asSession(s, 'POST', '/api/calendars', calendar, { csrf: null });
  expect(missing.status).toBe(403);
  expect(missing.body.message).toMatch(/X-CSRF-Token/);
  expect((await asSession(s, 'POST', '/api/calendars', calendar, { csrf: `${s.csrf.slice(0, -1)}A` })).status).toBe(403);
  // Another session's token does not do either.
  const other = await signIn(team.email);
  expect((await asSession(s, 'POST', '/api/calendars', calendar, { csrf: other.csrf })).status).toBe(403);
  const made = await asSession(s, 'POST', '/api/calendars', calendar);
  expect(made.status).toBe(200);
  expect((await team.api.get(`/api/calendars/${made.body.data.public_id}`)).status).toBe(200);
});

it('keeps a session in its own team', async () => {
  const other = await gw.newTeam();
  const theirs = (await other.api.post('/api/calendars', { name: 'Theirs', timezone: 'UTC' })).body.data;
  const s = await signIn(team.email);
  expect((await asSession(s, 'GET', `/api/calendars/${theirs.public_id}`)).status).toBe(404);
  expect((await asSession(s, 'DELETE', `/api/calendars/${theirs.public_id}`)).status).toBe(404);
  const listed = await asSession(s, 'GET', '/api/calendars');
  expect(listed.body.data.map((c: { public_id: string }) => c.public_id)).not.toContain(theirs.public_id);
});

it('makes a new session at sign-in and ends the one the browser brought (no fixation)', async () => {
  const planted = await signIn(team.email);
  const fresh = await signInWith(tokenOf(await linkAfterAsking(team.email)), planted.cookie);
  expect(fresh.status).toBe(200);
  const session = fresh.session as Browserish;
  expect(session.cookie).not.toBe(planted.cookie);
  expect((await asSession(planted, 'GET', '/api/session')).status).toBe(401);
  expect((await asSession(session, 'GET', '/api/session')).status).toBe(200);
});

async function linkAfterAsking(email: string): Promise<string> {
  const before = sink.for(email).length;
  expect((await gw.anon.post('/api/auth/sign-in-link', { email })).status).toBe(202);
  return linkFor(email, before + 1);
}

it('signs out one session, or every session of the user', async () => {
  const a = await signIn(team.email);
  const b = await signIn(team.email);
  const out = await asSession(a, 'DELETE', '/api/session');
  expect(out.status).toBe(200);
  expect(out.headers.get('set-cookie')).toMatch(/Max-Age=0/);
  expect((await asSession(a, 'GET', '/api/session')).status).toBe(401);
  expect((await asSession(b, 'GET', '/api/session')).status).toBe(200);
  const c = await signIn(team.email);
  const all = await asSession(c, 'POST', '/api/session/revoke-all');
  expect(all.status).toBe(200);
  expect(all.body.data.revoked).toBeGreaterThanOrEqual(2);
  expect((await asSession(b, 'GET', '/api/session')).status).toBe(401);
  expect((await asSession(c, 'GET', '/api/session')).status).toBe(401);
  // API tokens are not sessions: the team's token still works.
  expect((await team.api.get('/api/account')).status).toBe(200);
});

it('signs in with a password once one is set; changing it needs the current one', async () => {
  const owner = await gw.newTeam();
  const s = await signIn(owner.email);
  const weak = await asSession(s, 'PUT', '/api/account/password', { password: 'short' });
  expect(weak.status).toBe(422);
  expect((await asSession(s, 'PUT', '/api/account/password', { password: 'correct horse battery' })).status).toBe(200);
  const wrong = await gw.anon.post('/api/auth/sessions', { email: owner.email, password: 'wrong horse battery' });
  expect(wrong.status).toBe(401);
  expect(wrong.body.message).toBe('Wrong email or password.');
  const unknown = await gw.anon.post('/api/auth/sessions', { email: address('ghost'), password: 'correct horse battery' });
  expect(unknown.status).toBe(401);
  expect(unknown.body.message).toBe(wrong.body.message);
  const right = await gw.anon.post('/api/auth/sessions', { email: owner.email, password: 'correct horse battery' });
  expect(right.status).toBe(200);
  expect(right.body.data.user.has_password).toBe(true);
  expect((await asSession(s, 'PUT', '/api/account/password', { password: 'another good one' })).status).toBe(422);
  const elsewhere = await signIn(owner.email);
  expect((await asSession(s, 'PUT', '/api/account/password', { password: 'another good one', current_password: 'correct horse battery' })).status).toBe(200);
  // A changed password ends the user's other sessions, not the one that changed it.
  expect((await asSession(elsewhere, 'GET', '/api/session')).status).toBe(401);
  expect((await asSession(s, 'GET', '/api/session')).status).toBe(200);
  expect((await gw.anon.post('/api/auth/sessions', { email: owner.email, password: 'another good one' })).status).toBe(200);
});

it('creates, lists and revokes API tokens; a new token works at once and stops at once', async () => {
  const owner = await gw.newTeam();
  const s = await signIn(owner.email);
  const made = await asSession(s, 'POST', '/api/tokens', { name: 'CI' });
  expect(made.status).toBe(200);
  expect(made.body.data).toMatchObject({ kind: 'api', name: 'CI', last_used_at: null });
  expect(made.body.data.token).toMatch(/^cst_[0-9A-Za-z]{40}$/);
  const used = await fetch(`${gw.baseUrl}/api/calendars`, { headers: { Authorization: `Bearer ${made.body.data.token}` } });
  expect(used.status).toBe(200);
  const listed = await asSession(s, 'GET', '/api/tokens');
  const row = listed.body.data.find((t: { id: string }) => t.id === made.body.data.id);
  expect(row).toBeDefined();
  expect(row.token).toBeUndefined();
  await waitFor(async () => (await asSession(s, 'GET', '/api/tokens')).body.data.find((t: { id: string; last_used_at: string | null }) => t.id === made.body.data.id && t.last_used_at));
  // Another team's token is not this team's to revoke.
  const stranger = await gw.newTeam();
  const strangers = await signIn(stranger.email);
  expect((await asSession(strangers, 'DELETE', `/api/tokens/${made.body.data.id}`)).status).toBe(404);
  expect((await asSession(s, 'DELETE', `/api/tokens/${made.body.data.id}`)).status).toBe(200);
  const after = await fetch(`${gw.baseUrl}/api/calendars`, { headers: { Authorization: `Bearer ${made.body.data.token}` } });
  expect(after.status).toBe(401);
});

it('invites a member by email; a member cannot do an admin’s part; only an owner makes owners', async () => {
  const owner = await gw.newTeam();
  const s = await signIn(owner.email);
  const email = address('member');
  const invited = await asSession(s, 'POST', '/api/members', { email, name: 'Mo', role: 'member' });
  expect(invited.status).toBe(200);
  expect(invited.body.data).toMatchObject({ email, role: 'member', status: 'invited' });
  const mail = (await waitFor(() => sink.for(email).length > 0 && sink.for(email)))[0];
  expect(mail.parsed.subject).toMatch(/invited/i);
  const member = (await signInWith(tokenOf(await linkFor(email)))).session as Browserish;
  const listed = await asSession(member, 'GET', '/api/members');
  expect(listed.body.data.find((m: { email: string }) => m.email === email).status).toBe('active');
  // Events and calendars are a member's; smart links, webhooks, tokens and members are not.
  expect((await asSession(member, 'POST', '/api/calendars', { name: 'Mine', timezone: 'UTC' })).status).toBe(200);
  const refused = await asSession(member, 'POST', '/api/smart-links', { name: 'x' });
  expect(refused.status).toBe(403);
  expect(refused.body.message).toBe('This needs the admin role in the team; yours is member.');
  expect((await asSession(member, 'GET', '/api/tokens')).status).toBe(403);
  expect((await asSession(member, 'POST', '/api/members', { email: address('x'), role: 'member' })).status).toBe(403);
  // An admin, but not an owner: cannot make an owner, nor remove one.
  const me = listed.body.data.find((m: { email: string }) => m.email === email);
  expect((await asSession(s, 'PUT', `/api/members/${me.id}`, { role: 'admin' })).status).toBe(200);
  // The role applies at once, to the open session.
  expect((await asSession(member, 'GET', '/api/tokens')).status).toBe(200);
  const ownerRow = listed.body.data.find((m: { email: string }) => m.email === owner.email);
  expect((await asSession(member, 'PUT', `/api/members/${me.id}`, { role: 'owner' })).status).toBe(403);
  expect((await asSession(member, 'DELETE', `/api/members/${ownerRow.id}`)).status).toBe(403);
  // The last owner stays one.
  const lastOwner = await asSession(s, 'PUT', `/api/members/${ownerRow.id}`, { role: 'admin' });
  expect(lastOwner.status).toBe(409);
  // Removing someone ends their sessions at once.
  expect((await asSession(s, 'DELETE', `/api/members/${me.id}`)).status).toBe(200);
  expect((await asSession(member, 'GET', '/api/session')).status).toBe(401);
  // The address is taken already (by an account in any team).
  expect((await asSession(s, 'POST', '/api/members', { email: team.email, role: 'member' })).status).toBe(409);
});

it('refuses sign-up unless it is open', async () => {
  const res = await gw.anon.post('/api/auth/sign-up', { email: address('new'), name: 'New', team_name: 'New team' });
  expect(res.status).toBe(403);
  expect((await gw.anon.get('/api/auth/options')).body.data).toEqual({ signup: 'invite', password_sign_in: true });
});

describe('with SIGNUP=open', () => {
  let open: TestGateway;
  beforeAll(async () => {
    open = await startGateway({ QUEUE_PREFIX: prefix, SIGNUP: 'open' });
  });
  afterAll(() => open?.close());

  it('makes the team only when the emailed link is used', async () => {
    const email = address('founder');
    expect((await open.anon.post('/api/auth/sign-up', { email, name: 'Fay', team_name: 'Fay’s club' })).status).toBe(202);
    const link = await linkFor(email);
    expect(await open.db('users').where({ email }).first()).toBeUndefined();
    const res = await fetch(`${open.baseUrl}/api/auth/sessions`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ token: tokenOf(link) }) });
    expect(res.status).toBe(200);
    const body = (await res.json()) as { data: { user: { role: string; name: string }; team: { name: string } } };
    expect(body.data.user).toMatchObject({ role: 'owner', name: 'Fay' });
    expect(body.data.team.name).toBe('Fay’s club');
  });
});

describe('with SIGNUP=closed', () => {
  let closed: TestGateway;
  beforeAll(async () => {
    closed = await startGateway({ QUEUE_PREFIX: isolatedPrefix('sessions_closed'), SIGNUP: 'closed' });
  });
  afterAll(() => closed?.close());

  it('takes no sign-up and no invitation: the operator adds people', async () => {
    expect((await closed.anon.get('/api/auth/options')).body.data).toEqual({ signup: 'closed', password_sign_in: true });
    const signUp = await closed.anon.post('/api/auth/sign-up', { email: address('new'), name: 'New', team_name: 'New team' });
    expect([signUp.status, signUp.body.message]).toEqual([403, 'Sign-up is closed here: ask a team’s admin to invite you.']);
    // Refused before the sign-in limits count it: the client spent no attempt.
    expect(signUp.headers.get('x-ratelimit-remaining')).toBeNull();
    const owner = await closed.newTeam();
    const invite = await owner.api.post('/api/members', { email: address('invitee'), name: 'Ivy', role: 'member' });
    expect([invite.status, invite.body.message]).toEqual([403, 'Invitations are turned off here (SIGNUP=closed): the operator adds people.']);
    expect(await closed.db('users').where({ name: 'Ivy' }).first()).toBeUndefined();
  });
});

describe('sign-in rate limits', () => {
  let strict: TestGateway;
  beforeAll(async () => {
    // 5 attempts per client address in 10 minutes, and a fifth of that (1) per email address.
    strict = await startGateway({ QUEUE_PREFIX: isolatedPrefix('sessions_strict'), SIGN_IN_RATE_PER_10_MINUTES: '5' });
  });
  afterAll(() => strict?.close());

  it('limits links per email address and attempts per client, with Retry-After', async () => {
    const ann = address('ann');
    expect((await strict.anon.post('/api/auth/sign-in-link', { email: ann })).status).toBe(202);
    const again = await strict.anon.post('/api/auth/sign-in-link', { email: ann });
    expect([again.status, again.body, Number(again.headers.get('retry-after')) > 0]).toEqual([429, { message: 'Too Many Attempts.' }, true]);
    // Two attempts so far from this client; three more addresses, then the client is refused.
    for (let i = 0; i < 3; i++) expect((await strict.anon.post('/api/auth/sign-in-link', { email: address('other') })).status).toBe(202);
    const guessing = await strict.anon.post('/api/auth/sessions', { token: 'made-up.token' });
    expect([guessing.status, guessing.headers.get('x-ratelimit-limit'), Number(guessing.headers.get('retry-after')) > 0]).toEqual([429, '5', true]);
  });
});

it('sends no account email twice when its job runs again', async () => {
  const email = address('once');
  const owner = await gw.newTeam();
  const s = await signIn(owner.email);
  expect((await asSession(s, 'POST', '/api/members', { email, role: 'member' })).status).toBe(200);
  await linkFor(email);
  const link = await gw.db('sign_in_links').where({ email }).first('uid');
  const { accountMailWorker } = await import('../../services/mail-worker/account-mail');
  const def = accountMailWorker({ description: {}, send: async () => ({ messageId: 'x', response: '250' }), close: () => undefined }, 'x@example.test');
  const outcome: AccountMailOutcome = await def.process({ data: { linkUid: link.uid } } as never, worker.ctx, worker.ctx.logger);
  expect(outcome).toBe('skipped');
});
