import { extractionWorker } from '../../services/extraction-worker/extraction.worker';
import { ExtractionWaiter } from '../../services/gateway/extractions/extraction-waiter';
import { createLogger } from '../../shared/logging/logger';
import { startGateway, type TestGateway, type TestTeam } from '../helpers/gateway';
import { waitFor } from '../helpers/wait';
import { startWorker } from '../helpers/workers';

/** POST /api/events/extract and GET /api/events/extract/{ext}, through the real queue and worker. */
let gw: TestGateway;
let worker: { close(): Promise<void> };
let team: TestTeam;

beforeAll(async () => {
  gw = await startGateway();
  worker = await startWorker((ctx) => extractionWorker(ctx));
  team = await gw.newTeam();
});
afterAll(async () => {
  await worker.close();
  await gw.close();
});

const lunch = {
  text: 'Lunch with Dana next Tuesday at 12:30pm at Olive Garden for 45 minutes',
  timezone: 'America/New_York',
  reference_date: '2026-03-05T09:00:00-05:00',
};
const lunchResult = {
  title: 'Lunch with Dana',
  description: null,
  location: 'Olive Garden',
  // 10 March is after the DST change of 8 March: the offset is the one in force that day.
  date_start: '2026-03-10T12:30:00-04:00',
  date_end: '2026-03-10T13:15:00-04:00',
  timezone: 'America/New_York',
  is_all_day: false,
  recurrence_rule: null,
};
const isoMicros = expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/);

const teamRows = (teamId: number) => gw.db('extractions').where({ team_id: teamId });

describe('requesting an extraction', () => {
  it('answers 202 with the ext_ id; the worker completes it and GET shows the result', async () => {
    const res = await team.api.post('/api/events/extract', lunch);
    expect(res.status).toBe(202);
    expect(res.body).toEqual({ data: { id: expect.stringMatching(/^ext_[0-9A-Za-z]{16}$/), status: 'pending' } });
    const id = res.body.data.id;
    expect(res.headers.get('location')).toBe(`${gw.baseUrl}/api/events/extract/${id}`);

    const done = await waitFor(async () => {
      const got = await team.api.get(`/api/events/extract/${id}`);
      return got.body.data.status !== 'pending' && got;
    }, { what: 'the extraction to finish' });
    expect(done.status).toBe(200);
    expect(done.body).toEqual({
      data: { id, status: 'completed', result: lunchResult, error: null, created_at: isoMicros, completed_at: isoMicros },
    });
  });

  it('with ?wait=N answers 200 with the finished extraction', async () => {
    const res = await team.api.post('/api/events/extract?wait=10', lunch);
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({ status: 'completed', result: lunchResult, error: null });
    expect(res.body.data.completed_at).toEqual(isoMicros);
  });

  it('with ?wait=0 answers 202 at once', async () => {
    const res = await team.api.post('/api/events/extract?wait=0', lunch);
    expect(res.status).toBe(202);
    expect(res.body.data.status).toBe('pending');
  });

  it('records a text with no date as failed, with the reason', async () => {
    const res = await team.api.post('/api/events/extract?wait=10', { text: 'Please bring snacks for everyone', timezone: 'UTC' });
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({ status: 'failed', result: null, error: 'No date or time found in the text.' });
    expect(res.body.data.completed_at).toEqual(isoMicros);
    const got = await team.api.get(`/api/events/extract/${res.body.data.id}`);
    expect(got.body.data).toEqual(res.body.data);
  });

  it("reads the text in the team's oldest calendar's zone when no timezone is given", async () => {
    const other = await gw.newTeam();
    await other.api.post('/api/calendars', { name: 'Berlin', timezone: 'Europe/Berlin' });
    await other.api.post('/api/calendars', { name: 'Later', timezone: 'Asia/Tokyo' });
    const res = await other.api.post('/api/events/extract?wait=10', { text: 'Sprint review on 2026-07-01 at 15:00', reference_date: '2026-06-20T10:00:00Z' });
    expect(res.body.data.result).toMatchObject({ date_start: '2026-07-01T15:00:00+02:00', timezone: 'Europe/Berlin' });
    const none = await gw.newTeam();
    const utc = await none.api.post('/api/events/extract?wait=10', { text: 'Sprint review on 2026-07-01 at 15:00', reference_date: '2026-06-20T10:00:00Z' });
    expect(utc.body.data.result).toMatchObject({ date_start: '2026-07-01T15:00:00+00:00', timezone: 'UTC' });
  });

  it('counts "tomorrow" from the moment of the request when no reference_date is given', async () => {
    gw.clock.set('2026-03-05T15:00:00Z');
    try {
      const res = await team.api.post('/api/events/extract?wait=10', { text: 'Standup tomorrow at 9am', timezone: 'Europe/Paris' });
      expect(res.body.data.result).toMatchObject({ date_start: '2026-03-06T09:00:00+01:00' });
    } finally {
      gw.clock.reset();
    }
  });

  it('reads reference_date without an offset as wall time in the timezone', async () => {
    const res = await team.api.post('/api/events/extract?wait=10', {
      text: 'Standup tomorrow at 9am',
      timezone: 'Asia/Tokyo',
      reference_date: '2026-03-05 23:30',
    });
    expect(res.body.data.result).toMatchObject({ date_start: '2026-03-06T09:00:00+09:00', date_end: '2026-03-06T10:00:00+09:00' });
  });

  it('creates no event and leaves the monthly event count alone', async () => {
    const limited = await gw.newTeam({ plan: 'free', eventLimit: 0 });
    const res = await limited.api.post('/api/events/extract?wait=10', lunch);
    expect(res.status).toBe(200);
    expect((await limited.api.get('/api/account')).body.data.usage).toMatchObject({ current: 0, limit: 0 });
    expect(await gw.db('events').where({ team_id: limited.teamId }).first()).toBeUndefined();
  });
});

describe('posting the result to the create endpoint', () => {
  let cal: { public_id: string };
  beforeAll(async () => {
    cal = (await team.api.post('/api/calendars', { name: 'From text', timezone: 'America/New_York' })).body.data;
  });

  const extractAndCreate = async (body: object) => {
    const extracted = await team.api.post('/api/events/extract?wait=10', body);
    expect(extracted.body.data.status).toBe('completed');
    const result = extracted.body.data.result;
    const created = await team.api.post(`/api/calendars/${cal.public_id}/events`, result);
    expect(created.status).toBe(200);
    return { result, event: created.body.data };
  };

  it('accepts a timed result as is', async () => {
    const { event } = await extractAndCreate(lunch);
    expect(event).toMatchObject({ title: 'Lunch with Dana', location: 'Olive Garden', date_start: '2026-03-10T12:30:00-04:00', date_end: '2026-03-10T13:15:00-04:00' });
  });

  it('accepts an all-day result (inclusive last day) as is', async () => {
    const { result, event } = await extractAndCreate({ text: 'Design sprint May 11-13 in Lisbon', timezone: 'Europe/Lisbon', reference_date: '2026-03-05T10:00:00Z' });
    expect(result).toMatchObject({ is_all_day: true, date_start: '2026-05-11', date_end: '2026-05-13' });
    expect(event).toMatchObject({ is_all_day: true, date_start: '2026-05-11T00:00:00+00:00', date_end: '2026-05-13T00:00:00+00:00', location: 'Lisbon' });
    expect(event.date_range_formatted).toMatch(/\(all day\)$/);
  });

  it('accepts a recurring result in another zone as is', async () => {
    const { result, event } = await extractAndCreate({ text: 'Office hours Tuesdays and Thursdays 4pm PT', timezone: 'America/New_York', reference_date: '2026-03-05T10:00:00-05:00' });
    expect(result).toMatchObject({ recurrence_rule: 'FREQ=WEEKLY;BYDAY=TU,TH', timezone: 'America/Los_Angeles', date_start: '2026-03-05T16:00:00-08:00' });
    expect(event).toMatchObject({ is_recurring: true, recurrence_rule: 'FREQ=WEEKLY;BYDAY=TU,TH', timezone: 'America/Los_Angeles' });
  });
});

describe('validation (422, nothing written)', () => {
  const cases: Array<[string, object, string, Record<string, string[]>]> = [
    ['text missing', { timezone: 'UTC' }, '', { text: ['The text field is required.'] }],
    ['text empty', { text: '' }, '', { text: ['The text field is required.'] }],
    ['text too short (after trimming)', { text: '   tea at 3   ' }, '', { text: ['The text field must be at least 10 characters.'] }],
    ['text too long', { text: 'x'.repeat(8001) }, '', { text: ['The text field must not be greater than 8000 characters.'] }],
    // Characters are code points: an emoji is one character (two UTF-16 units).
    ['text too short in characters (6 emoji)', { text: '🎉'.repeat(6) }, '', { text: ['The text field must be at least 10 characters.'] }],
    ['text too long in characters (8001 emoji)', { text: '🎉'.repeat(8001) }, '', { text: ['The text field must not be greater than 8000 characters.'] }],
    ['text not a string', { text: 12345678901 }, '', { text: ['The text field must be a string.'] }],
    ['timezone unknown', { text: 'Lunch tomorrow at noon', timezone: 'Mars/Olympus' }, '', { timezone: ['The timezone field must be an IANA time zone name, such as Europe/Berlin, America/New_York or UTC.'] }],
    ['reference_date not a date', { text: 'Lunch tomorrow at noon', reference_date: 'yesterday' }, '', { reference_date: ['The reference date field must be a date: YYYY-MM-DD, YYYY-MM-DD HH:mm[:ss], or ISO 8601 such as 2026-07-14T13:00:00+02:00.'] }],
    ['wait over 10', { text: 'Lunch tomorrow at noon' }, '?wait=11', { wait: ['The wait field must not be greater than 10.'] }],
    ['wait negative', { text: 'Lunch tomorrow at noon' }, '?wait=-1', { wait: ['The wait field must be at least 0.'] }],
    ['wait not a number', { text: 'Lunch tomorrow at noon' }, '?wait=soon', { wait: ['The wait field must be an integer.'] }],
  ];

  it.each(cases)('%s', async (_name, body, query, errors) => {
    const fresh = await gw.newTeam();
    const res = await fresh.api.post(`/api/events/extract${query}`, body);
    expect(res.status).toBe(422);
    expect(res.body).toEqual({ message: Object.values(errors)[0][0], errors });
    expect(await teamRows(fresh.teamId).first()).toBeUndefined();
  });

  it('counts text length in characters, not UTF-16 units', async () => {
    const fresh = await gw.newTeam();
    for (const text of ['🎉'.repeat(10), `Party on 2026-07-01 ${'🎉'.repeat(4001)}`, '🎉'.repeat(8000)]) {
      const res = await fresh.api.post('/api/events/extract', { text, timezone: 'UTC' });
      expect(res.status).toBe(202);
    }
    expect((await teamRows(fresh.teamId)).map((r: { text: string }) => [...r.text].length).sort((a, b) => a - b)).toEqual([10, 4021, 8000]);
  });

  it('takes an empty timezone as none given', async () => {
    const fresh = await gw.newTeam();
    await fresh.api.post('/api/calendars', { name: 'Berlin', timezone: 'Europe/Berlin' });
    const res = await fresh.api.post('/api/events/extract?wait=10', { text: 'Lunch tomorrow at noon', timezone: '', reference_date: '2026-06-20T10:00:00Z' });
    expect(res.status).toBe(200);
    expect(res.body.data.result).toMatchObject({ timezone: 'Europe/Berlin', date_start: '2026-06-21T12:00:00+02:00' });
  });

  it('lists every failing field at once', async () => {
    const res = await team.api.post('/api/events/extract?wait=99', { text: 'short', timezone: 'Nowhere/Land', reference_date: '2026-02-30' });
    expect(res.status).toBe(422);
    expect(res.body).toEqual({
      message: 'The wait field must not be greater than 10. (and 3 more errors)',
      errors: {
        wait: ['The wait field must not be greater than 10.'],
        text: ['The text field must be at least 10 characters.'],
        timezone: ['The timezone field must be an IANA time zone name, such as Europe/Berlin, America/New_York or UTC.'],
        reference_date: ['The reference date field must be a date: YYYY-MM-DD, YYYY-MM-DD HH:mm[:ss], or ISO 8601 such as 2026-07-14T13:00:00+02:00.'],
      },
    });
  });

  it('needs a token', async () => {
    const res = await gw.anon.post('/api/events/extract', lunch);
    expect(res.status).toBe(401);
    expect(res.body).toEqual({ message: 'Unauthenticated.' });
  });
});

describe('reading an extraction', () => {
  it("answers another team's id exactly like an unknown one (404)", async () => {
    const mine = await team.api.post('/api/events/extract', lunch);
    const other = await gw.newTeam();
    const theirs = await other.api.get(`/api/events/extract/${mine.body.data.id}`);
    const unknown = await other.api.get('/api/events/extract/ext_0000000000000000');
    const malformed = await other.api.get('/api/events/extract/evt_nope');
    for (const res of [theirs, unknown, malformed]) {
      expect(res.status).toBe(404);
      expect(res.body).toEqual({ message: 'Extraction not found.' });
    }
  });

  it('is routed apart from /api/events/{evt}', async () => {
    const cal = (await team.api.post('/api/calendars', { name: 'Routes', timezone: 'UTC' })).body.data;
    const evt = (await team.api.post(`/api/calendars/${cal.public_id}/events`, { title: 'x', date_start: '2026-05-01 10:00', date_end: '2026-05-01 11:00', timezone: 'UTC' })).body.data;
    expect((await team.api.get(`/api/events/${evt.public_id}`)).status).toBe(200);
    expect((await team.api.get(`/api/events/extract/${evt.public_id}`)).body).toEqual({ message: 'Extraction not found.' });
    expect((await team.api.get('/api/events/extract')).body).toEqual({ message: 'Event not found.' });
    const paths = gw.openapi.paths as Record<string, Record<string, unknown>>;
    expect(Object.keys(paths['/api/events/extract'])).toEqual(['post', 'options']);
    expect(Object.keys(paths['/api/events/extract/{ext}'])).toEqual(['get', 'options']);
  });
});

describe('waiting for a result', () => {
  it('lets every waiting request go when the gateway shuts down', async () => {
    const waiter = new ExtractionWaiter(gw.config.redis, gw.config.queuePrefix, createLogger('waiter-test', 'silent'));
    let reads = 0;
    // Far longer than the test may take: only release() can end this wait in time.
    const waiting = waiter.wait('ext_0000000000000000', 600_000, async () => {
      reads++;
      return null;
    });
    await waitFor(() => reads === 1, { what: 'the wait to subscribe and read once' });
    await waiter.close();
    expect(await waiting).toBeNull();
    expect(await waiter.wait('ext_0000000000000000', 600_000, async () => 'finished')).toBeNull();
  });
});

describe('when Redis cannot take the job', () => {
  it('answers 503 and leaves no row behind', async () => {
    const down = await startGateway();
    try {
      const lonely = await down.newTeam();
      // The gateway's request-path connection is gone (as when Redis is down): no offline
      // queue, so the job cannot be stored.
      down.redis.disconnect();
      const res = await lonely.api.post('/api/events/extract?wait=5', lunch);
      expect(res.status).toBe(503);
      expect(res.body).toEqual({ message: 'Service temporarily unavailable.' });
      expect(res.headers.get('retry-after')).toBe('5');
      expect(await teamRows(lonely.teamId).first()).toBeUndefined();
    } finally {
      await down.close();
    }
  });
});
