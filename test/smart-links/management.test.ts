import { Queue } from 'bullmq';
import { derivedUid } from '../../services/gateway/smart-links/secrets';
import { writeBatch } from '../../services/smart-link-worker/write-batch';
import { groupJobId, type SmartLinkSubmission, smartLinkJob, submissionsOf } from '../../shared/queues/smart-link.job';
import { queuedEntry } from '../../shared/queues/submission-index';
import { startGateway, type TestGateway, type TestTeam } from '../helpers/gateway';
import { newLink, submitForm } from './helpers';

let gw: TestGateway;
let team: TestTeam;

beforeAll(async () => {
  gw = await startGateway();
  team = await gw.newTeam();
});
afterAll(() => gw.close());

describe('managing smart links', () => {
  it('creates a link whose secret is shown once', async () => {
    const cal = (await team.api.post('/api/calendars', { name: 'Leads', timezone: 'UTC' })).body.data;
    const res = await team.api.post('/api/smart-links', { name: 'Website form', calendar: cal.public_id });
    expect(res.status).toBe(200);
    const link = res.body.data;
    expect(link).toEqual({
      id: expect.stringMatching(/^sl_[0-9A-Za-z]{16}$/),
      key: expect.stringMatching(/^[0-9A-Za-z]{24}$/),
      url: `${gw.baseUrl}/s/${link.key}`,
      name: 'Website form',
      calendar_uid: cal.public_id,
      requires_approval: false,
      signed: false,
      is_active: true,
      default_duration: 60,
      previous_secret_expires_at: null,
      created_at: expect.stringMatching(/Z$/),
      updated_at: expect.stringMatching(/Z$/),
      signing_secret: expect.stringMatching(/^whsec_/),
    });
    const got = await team.api.get(`/api/smart-links/${link.id}`);
    expect(got.body.data.signing_secret).toBeUndefined();
    expect((await team.api.get('/api/smart-links')).body.data.map((l: { id: string }) => l.id)).toContain(link.id);
    const stored = await gw.db('smart_links').where({ uid: link.id.slice(3) }).first();
    expect(JSON.stringify(stored)).not.toContain(link.signing_secret.slice(6));
  });

  it('updates, keeping omitted fields, and the ingest path follows at once', async () => {
    const { link, calendar } = await newLink(gw, team, { default_duration: 30 });
    expect((await submitForm(link.url, { title: 'a', start: '2030-01-01 10:00' })).status).toBe(202);
    const off = await team.api.put(`/api/smart-links/${link.id}`, { name: 'Renamed', calendar: calendar.public_id, is_active: false });
    expect(off.body.data).toMatchObject({ name: 'Renamed', is_active: false, default_duration: 30 });
    expect((await submitForm(link.url, { title: 'a', start: '2030-01-01 10:00' })).status).toBe(404);
    await team.api.put(`/api/smart-links/${link.id}`, { name: 'Renamed', calendar: calendar.public_id, is_active: true });
    expect((await submitForm(link.url, { title: 'a', start: '2030-01-01 10:00' })).status).toBe(202);
  });

  it('validates every field', async () => {
    const res = await team.api.post('/api/smart-links', { calendar: 'cal_nope', default_duration: 0, signed: 'sometimes' });
    expect(res.status).toBe(422);
    expect(res.body.errors).toEqual({
      name: ['The name field is required.'],
      default_duration: ['The default duration field must be at least 1.'],
      signed: ['The signed field must be true or false.'],
    });
    const cal = await team.api.post('/api/smart-links', { name: 'x', calendar: 'cal_AAAAAAAAAAAAAAAA' });
    expect(cal.body.errors).toEqual({ calendar: ['The calendar field must be the id (cal_…) of one of your calendars.'] });
  });

  it("answers 404 for another team's links", async () => {
    const { link, calendar } = await newLink(gw, team);
    const other = await gw.newTeam();
    for (const res of [
      await other.api.get(`/api/smart-links/${link.id}`),
      await other.api.put(`/api/smart-links/${link.id}`, { name: 'x', calendar: calendar.public_id }),
      await other.api.delete(`/api/smart-links/${link.id}`),
      await other.api.post(`/api/smart-links/${link.id}/rotate-secret`),
    ]) {
      expect(res.status).toBe(404);
    }
    // nor can a link be pointed at another team's calendar
    const theirs = (await other.api.post('/api/calendars', { name: 'T', timezone: 'UTC' })).body.data;
    expect((await team.api.put(`/api/smart-links/${link.id}`, { name: 'x', calendar: theirs.public_id })).status).toBe(422);
  });
});

describe('submission status', () => {
  it('reports queued while the job waits in Redis', async () => {
    // No worker runs in this file: submissions stay queued.
    const { link } = await newLink(gw, team);
    const res = await submitForm(link.url, { title: 'Waiting', start: '2030-01-01 10:00' });
    const status = await team.api.get(`/api/smart-link-submissions/${res.body.data.id}`);
    expect(status.body.data).toEqual({ id: res.body.data.id, status: 'queued', event_public_id: null, error: null, received_at: expect.any(String), processed_at: null });
    const other = await gw.newTeam();
    expect((await other.api.get(`/api/smart-link-submissions/${res.body.data.id}`)).status).toBe(404);
    expect((await team.api.get('/api/smart-link-submissions/sls_AAAAAAAAAAAAAAAA')).status).toBe(404);
  });

  it('lists a link\'s queued submissions with status=queued, newest first, page by page', async () => {
    // A gateway on a queue prefix of its own: no worker of any suite takes these jobs.
    const idle = await startGateway({ QUEUE_PREFIX: `${gw.config.queuePrefix.slice(0, -1)}_idle}` });
    const queue = new Queue(smartLinkJob.queue, { connection: idle.redis, prefix: idle.config.queuePrefix });
    try {
      const { link } = await newLink(gw, team);
      const other = (await newLink(gw, team)).link;
      const url = (l: { key: string }) => `${idle.baseUrl}/s/${l.key}`;
      const ids: string[] = [];
      const start = Date.UTC(2030, 0, 1, 9);
      for (let i = 0; i < 5; i++) {
        idle.clock.set(new Date(start + i * 1000));
        ids.push((await submitForm(url(link), { title: `Q${i}`, start: '2030-01-01 10:00' })).body.data.id);
        await submitForm(url(other), { title: `Other ${i}`, start: '2030-01-01 10:00' });
      }
      // Received in the same millisecond as the last: the id breaks the tie.
      ids.push((await submitForm(url(link), { title: 'Q5', start: '2030-01-01 10:00' })).body.data.id);
      const newest = [ids[0], ids[1], ids[2], ids[3], ...[ids[4], ids[5]].sort()].reverse();

      const list = (query: string) => idle.anon.as(team.token).get(`/api/smart-links/${link.id}/submissions?${query}`);
      const page1 = await list('status=queued&per_page=4');
      expect(page1.status).toBe(200);
      expect(page1.body.data.map((s: { id: string }) => s.id)).toEqual(newest.slice(0, 4));
      expect(page1.body.data[0]).toEqual({ id: newest[0], status: 'queued', event_public_id: null, error: null, received_at: '2030-01-01T09:00:04.000000Z', processed_at: null });
      const page2 = await list(`status=queued&per_page=4&cursor=${page1.body.meta.next_cursor}`);
      expect(page2.body).toEqual({ data: newest.slice(4).map((id) => expect.objectContaining({ id, status: 'queued' })), meta: { per_page: 4, next_cursor: null } });
      // Recorded listings and queued listings page separately: one's cursor is not the other's.
      expect((await list(`status=processed&cursor=${page1.body.meta.next_cursor}`)).status).toBe(422);
      expect((await list(`status=queued&cursor=${Buffer.from('["2030-01-01 09:00:00+00",1]').toString('base64url')}`)).status).toBe(422);
      // Without a status: the records, and none is written yet.
      expect((await list('')).body.data).toEqual([]);

      // Once its record is written the submission is no longer queued, though its job is still there.
      const queued = await queuedEntry(idle.redis, idle.config.queuePrefix, ids[2].slice(4));
      const job = await queue.getJob(queued?.jobId as string);
      await writeBatch(gw.db, submissionsOf(job?.data).filter((s) => s.submission === ids[2].slice(4)), new Date(), gw.config.publicBaseUrl);
      const after = await list('status=queued');
      expect(after.body.data.map((s: { id: string }) => s.id)).toEqual(newest.filter((id) => id !== ids[2]));
      expect((await list('')).body.data.map((s: { id: string; status: string }) => [s.id, s.status])).toEqual([[ids[2], 'processed']]);

      expect((await (await gw.newTeam()).api.get(`/api/smart-links/${link.id}/submissions?status=queued`)).status).toBe(404);
    } finally {
      await queue.obliterate({ force: true });
      await queue.close();
      await idle.close();
    }
  });
});

describe('the batch writer', () => {
  function job(link: { id: number; teamId: number; calendarId: number }, n: number, title = `Event ${n}`): SmartLinkSubmission {
    return {
      submission: derivedUid('k', `s${n}-${Math.random()}`),
      link,
      receivedAt: new Date(Date.UTC(2030, 0, 1, 0, 0, n)).toISOString(),
      event: {
        uid: derivedUid('k', `e-${link.id}-${title}`),
        title,
        description: 'Plain text',
        location: null,
        internal_name: null,
        is_all_day: false,
        timezone: 'UTC',
        date_start: '2030-02-01T10:00:00Z',
        date_end: '2030-02-01T11:00:00Z',
        ends_at: '2030-02-01T11:00:00Z',
        status: 'approved',
      },
    };
  }

  async function linkRefs(eventLimit?: number) {
    const own = await gw.newTeam({ eventLimit: eventLimit ?? null });
    const { link } = await newLink(gw, own);
    const row = await gw.db('smart_links').where({ uid: link.id.slice(3) }).first();
    return { own, ref: { id: row.id, teamId: row.team_id, calendarId: row.calendar_id } };
  }

  it('is idempotent: the same jobs written twice make each event and submission row once', async () => {
    const { own, ref } = await linkRefs();
    const jobs = [job(ref, 1), job(ref, 2), job(ref, 3, 'Event 1')]; // the third repeats the first's content
    const first = await writeBatch(gw.db, jobs, new Date(), gw.config.publicBaseUrl);
    const second = await writeBatch(gw.db, jobs, new Date(), gw.config.publicBaseUrl);
    expect([...first.outcomes.values()].map((o) => o.status)).toEqual(['processed', 'processed', 'duplicate']);
    expect(Object.fromEntries(second.outcomes)).toEqual(Object.fromEntries(first.outcomes));
    expect(second.calendarsChanged.size).toBe(0);
    const events = await gw.db('events').where({ team_id: own.teamId }).count<{ count: number }[]>('* as count');
    const rows = await gw.db('smart_link_submissions').where({ team_id: own.teamId }).count<{ count: number }[]>('* as count');
    expect([events[0].count, rows[0].count]).toEqual([2, 3]);
    expect((await gw.db('events').where({ team_id: own.teamId }).first('description')).description).toBe('<p>Plain text</p>');
  });

  it('keeps the allowance in the order received and frees nothing it did not use', async () => {
    const { own, ref } = await linkRefs(2);
    const jobs = [job(ref, 3), job(ref, 1), job(ref, 2)];
    const { outcomes } = await writeBatch(gw.db, jobs, new Date(), gw.config.publicBaseUrl);
    expect(outcomes.get(jobs[1].submission)?.status).toBe('processed');
    expect(outcomes.get(jobs[2].submission)?.status).toBe('processed');
    expect(outcomes.get(jobs[0].submission)).toEqual({ status: 'failed', event: null, error: 'event_limit_exceeded' });
    const usage = await own.api.get('/api/account');
    expect(usage.body.data.usage).toMatchObject({ current: 2, remaining: 0 });
  });

  it('fails submissions whose calendar was deleted, without an event', async () => {
    const { own, ref } = await linkRefs();
    await gw.db('calendars').where({ id: ref.calendarId }).update({ deleted_at: gw.db.fn.now() });
    const { outcomes } = await writeBatch(gw.db, [job(ref, 1)], new Date(), gw.config.publicBaseUrl);
    expect([...outcomes.values()]).toEqual([{ status: 'failed', event: null, error: 'calendar_not_found' }]);
    const events = await gw.db('events').where({ team_id: own.teamId }).count<{ count: number }[]>('* as count');
    expect(events[0].count).toBe(0);
  });

  it('bad payloads fail at once without retries', async () => {
    const { startWorker } = await import('../helpers/workers');
    const { smartLinkWorker } = await import('../../services/smart-link-worker/smart-link.worker');
    const w = await startWorker(smartLinkWorker);
    const queue = new Queue(smartLinkJob.queue, { connection: gw.redis, prefix: gw.config.queuePrefix });
    try {
      const bad = await queue.add('submissions', { submission: 'not-valid' }, { jobId: 'badpayload0000000', attempts: 5 });
      const { waitFor } = await import('../helpers/wait');
      await waitFor(async () => (await bad.getState()) === 'failed', { what: 'the bad job to fail' });
      const failed = await queue.getJob(bad.id as string);
      expect(failed?.attemptsMade).toBe(1);
      expect(failed?.failedReason).toMatch(/invalid smart-link-submissions payload/);
      // Well formed but for a day that does not exist: refused before it can fail a whole batch in Postgres.
      const { ref } = await linkRefs();
      const good = job(ref, 98);
      const { link: _link, ...entry } = good;
      const badDay = await queue.add('submissions', { link: good.link, submissions: [{ ...entry, event: { ...entry.event, date_start: '2030-02-30T10:00:00.000Z' } }] }, { jobId: 'badday00000000000', attempts: 5 });
      await waitFor(async () => (await badDay.getState()) === 'failed', { what: 'the job with a nonexistent day to fail' });
      const failedDay = await queue.getJob(badDay.id as string);
      expect(failedDay?.attemptsMade).toBe(1);
      expect(failedDay?.failedReason).toMatch(/"submissions\[0\]\.event\.date_start" must be a UTC instant .* of a day and time that exist/);
      // A group of submissions with one such among them: the job fails at once, and says which.
      const submissions = [entry, { ...entry, submission: derivedUid('k', 'bad-in-group'), event: { ...entry.event, date_end: '2030-02-30T11:00:00.000Z' } }];
      const badGroup = await queue.add('submissions', { link: good.link, submissions }, { jobId: groupJobId('BadGroup00'), attempts: 5 });
      await waitFor(async () => (await badGroup.getState()) === 'failed', { what: 'the group with a nonexistent day to fail' });
      const failedGroup = await queue.getJob(badGroup.id as string);
      expect(failedGroup?.attemptsMade).toBe(1);
      expect(failedGroup?.failedReason).toMatch(/"submissions\[1\]\.event\.date_end" must be a UTC instant .* of a day and time that exist/);
    } finally {
      await w.close();
    }
  });
});
