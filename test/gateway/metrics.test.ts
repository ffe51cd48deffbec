import { startGateway, type TestGateway } from '../helpers/gateway';
import { newLink, submitForm } from '../smart-links/helpers';

const TOKEN = 'metrics-token-0123456789abcdef';
let gw: TestGateway;
beforeAll(async () => {
  gw = await startGateway({ METRICS_TOKEN: TOKEN });
});
afterAll(() => gw.close());

const scrape = async () => {
  const res = await gw.anon.get('/metrics', { headers: { Authorization: `Bearer ${TOKEN}` } });
  expect(res.status).toBe(200);
  return res.text;
};

/** The value of one series, e.g. value(text, 'calendar_http_requests_total', {route: '/api/calendars'}). */
function value(text: string, name: string, labels: Record<string, string>): number {
  const line = text.split('\n').find((l) => l.startsWith(`${name}{`) && Object.entries(labels).every(([k, v]) => l.includes(`${k}="${v}"`)));
  return line ? Number(line.split(' ').pop()) : 0;
}

describe('/metrics', () => {
  it('needs the token: 401 without it or with another one', async () => {
    const none = await gw.anon.get('/metrics');
    expect(none.status).toBe(401);
    expect(none.headers.get('www-authenticate')).toBe('Bearer realm="metrics"');
    expect(none.headers.get('cache-control')).toBe('no-store');
    expect(none.body).toEqual({ message: 'Unauthenticated.' });
    // JSON for a browser too: not a page, Prometheus and curl read it.
    const browser = await gw.anon.get('/metrics', { headers: { Accept: 'text/html,*/*;q=0.8' } });
    expect([browser.status, browser.headers.get('content-type')]).toEqual([401, 'application/json; charset=utf-8']);
    expect((await gw.anon.get('/metrics', { headers: { Authorization: `Bearer ${TOKEN}x` } })).status).toBe(401);
    expect((await gw.anon.get('/metrics', { headers: { Authorization: TOKEN } })).status).toBe(401);
  });

  it('is not served while METRICS_TOKEN is unset', async () => {
    const off = await startGateway();
    try {
      const res = await off.anon.get('/metrics');
      expect(res.status).toBe(404);
      expect(res.body.message).toContain('METRICS_TOKEN');
    } finally {
      await off.close();
    }
  });

  it('counts requests and their latency by route pattern and status, the ingest path too', async () => {
    const team = await gw.newTeam();
    const before = await scrape();
    const cal = (await team.api.post('/api/calendars', { name: 'M', timezone: 'UTC' })).body.data;
    await team.api.get(`/api/calendars/${cal.public_id}`);
    await team.api.get('/api/calendars/cal_nope');
    const { link } = await newLink(gw, team);
    expect((await submitForm(link.url, { title: 'Call', start: '2030-01-01 10:00' })).status).toBe(202);
    const after = await scrape();
    const delta = (labels: Record<string, string>) => value(after, 'calendar_http_requests_total', labels) - value(before, 'calendar_http_requests_total', labels);
    expect(delta({ method: 'GET', route: '/api/calendars/:cal', status: '200' })).toBe(1);
    expect(delta({ method: 'GET', route: '/api/calendars/:cal', status: '404' })).toBe(1);
    expect(delta({ method: 'POST', route: '/s/:key', status: '202' })).toBe(1);
    // no raw ids in labels
    expect(after).not.toContain(cal.public_id);
    expect(value(after, 'calendar_http_request_duration_seconds_count', { method: 'POST', route: '/api/calendars', status: '200' })).toBeGreaterThanOrEqual(1);
    expect(value(after, 'calendar_http_request_duration_seconds_bucket', { le: '+Inf', method: 'GET', route: '/api/calendars/:cal', status: '200', service: 'gateway' })).toBeGreaterThanOrEqual(1);
  });

  it('reports queue depth and event-limit rejections', async () => {
    const team = await gw.newTeam({ eventLimit: 0 });
    const before = value(await scrape(), 'calendar_event_limit_rejections_total', { source: 'api' });
    expect((await team.api.post('/api/events', { title: 'Over', start: '2030-01-01 10:00' })).status).toBe(409);
    const text = await scrape();
    expect(value(text, 'calendar_event_limit_rejections_total', { source: 'api' })).toBe(before + 1);
    for (const queue of ['smart-link-submissions', 'extractions', 'emails']) {
      expect(text).toMatch(new RegExp(`^calendar_queue_jobs\\{queue="${queue}",state="waiting",service="gateway"\\} \\d+$`, 'm'));
    }
  });
});
