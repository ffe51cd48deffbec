import { startGateway, type TestGateway } from '../helpers/gateway';
import { isolatedPrefix } from '../helpers/service-processes';

/**
 * Anonymous reads of a calendar (its page, its feed, its events' .ics files) count per minute
 * against the client's address and against the calendar. Behind TRUST_PROXY=1 each test
 * speaks for as many clients as it likes through X-Forwarded-For.
 */
const HTML = { Accept: 'text/html' };
const from = (address: string, extra: Record<string, string> = {}) => ({ headers: { 'X-Forwarded-For': address, ...HTML, ...extra } });

async function calendarWithEvent(gw: TestGateway) {
  const team = await gw.newTeam();
  const cal = (await team.api.post('/api/calendars', { name: 'Reads', timezone: 'UTC' })).body.data;
  const event = (await team.api.post(`/api/calendars/${cal.public_id}/events`, { title: 'Talk', date_start: '2030-05-01 10:00', date_end: '2030-05-01 11:00', timezone: 'UTC' })).body.data;
  return { uid: cal.uid as string, event: event.uid as string };
}

describe('per address', () => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startGateway({ PUBLIC_READ_RATE_PER_MINUTE: '3', TRUST_PROXY: '1', QUEUE_PREFIX: isolatedPrefix('public_reads_address') });
  });
  afterAll(() => gw.close());

  it('counts the feed, the page and event .ics files together, then answers 429 with Retry-After; another address is not limited', async () => {
    const cal = await calendarWithEvent(gw);
    const a = '203.0.113.10';
    const seen = [];
    for (const path of [`/c/${cal.uid}.ics`, `/c/${cal.uid}`, `/e/${cal.event}/ics`]) {
      const res = await gw.anon.get(path, from(a));
      expect(res.status).toBe(200);
      seen.push([res.headers.get('x-ratelimit-limit'), res.headers.get('x-ratelimit-remaining')]);
    }
    expect(seen).toEqual([
      ['3', '2'],
      ['3', '1'],
      ['3', '0'],
    ]);
    for (const path of [`/c/${cal.uid}.ics`, `/c/${cal.uid}`, `/e/${cal.event}/apple`, `/e/${cal.event}/outlook`]) {
      const over = await gw.anon.get(path, from(a));
      expect(over.status).toBe(429);
      expect(over.headers.get('content-type')).toMatch(/^text\/html/);
      expect(over.headers.get('cache-control')).toBe('no-store');
      expect(over.headers.get('x-ratelimit-remaining')).toBe('0');
      expect(Number(over.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
      expect(Number(over.headers.get('retry-after'))).toBeLessThanOrEqual(60);
    }
    const json = await gw.anon.get(`/c/${cal.uid}.ics`, from(a, { Accept: 'application/json' }));
    expect(json.status).toBe(429);
    expect(json.body).toEqual({ message: 'Too Many Attempts.' });
    // A conditional request is a read too.
    expect((await gw.anon.get(`/c/${cal.uid}.ics`, from(a, { 'If-None-Match': '"x"' }))).status).toBe(429);

    // The event page and the platform redirects are not counted.
    expect((await gw.anon.get(`/e/${cal.event}`, from(a))).status).toBe(200);
    expect((await gw.anon.get(`/e/${cal.event}/google`, from(a))).status).toBe(302);

    const b = '203.0.113.11';
    expect((await gw.anon.get(`/c/${cal.uid}.ics`, from(b))).status).toBe(200);
    expect((await gw.anon.get(`/c/${cal.uid}`, from(b))).status).toBe(200);
    expect((await gw.anon.get(`/e/${cal.event}/ics`, from(b))).status).toBe(200);
  });

  it('counts reads of every calendar against the address, and made-up events and calendars too', async () => {
    const one = await calendarWithEvent(gw);
    const two = await calendarWithEvent(gw);
    const a = '203.0.113.20';
    expect((await gw.anon.get(`/c/${one.uid}.ics`, from(a))).status).toBe(200);
    expect((await gw.anon.get(`/e/${'A'.repeat(16)}/ics`, from(a))).status).toBe(404);
    expect((await gw.anon.get(`/c/${'B'.repeat(16)}`, from(a))).status).toBe(404);
    expect((await gw.anon.get(`/c/${two.uid}.ics`, from(a))).status).toBe(429);
    expect((await gw.anon.get(`/e/${'A'.repeat(16)}/ics`, from(a))).status).toBe(429);
  });
});

describe('per calendar', () => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startGateway({ PUBLIC_CALENDAR_READ_RATE_PER_MINUTE: '4', TRUST_PROXY: '1', QUEUE_PREFIX: isolatedPrefix('public_reads_calendar') });
  });
  afterAll(() => gw.close());

  it('counts a calendar’s reads from every address together; other calendars are not limited', async () => {
    const busy = await calendarWithEvent(gw);
    const quiet = await calendarWithEvent(gw);
    const reads = [`/c/${busy.uid}.ics`, `/c/${busy.uid}`, `/e/${busy.event}/ics`, `/c/${busy.uid}.ics`];
    for (const [i, path] of reads.entries()) {
      const res = await gw.anon.get(path, from(`198.51.100.${i + 1}`));
      expect(res.status).toBe(200);
      expect(res.headers.get('x-ratelimit-limit')).toBe('4');
    }
    const over = await gw.anon.get(`/c/${busy.uid}.ics`, from('198.51.100.99'));
    expect(over.status).toBe(429);
    expect(over.headers.get('x-ratelimit-limit')).toBe('4');
    expect(Number(over.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect((await gw.anon.get(`/e/${busy.event}/ics`, from('198.51.100.98'))).status).toBe(429);
    expect((await gw.anon.get(`/c/${quiet.uid}.ics`, from('198.51.100.99'))).status).toBe(200);
    expect((await gw.anon.get(`/c/${quiet.uid}`, from('198.51.100.99'))).status).toBe(200);
  });
});
