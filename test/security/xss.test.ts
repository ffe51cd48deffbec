import fs from 'node:fs';
import { type Browser, type BrowserContext, chromium } from 'playwright-core';
import type { TestGateway, TestTeam } from '../helpers/gateway';
import { BROWSER_UA, dropPrefix, securityPrefix, startSecurityGateway } from './fixtures';
import { ICON_SPRITE } from '../../services/gateway/public/add-to-calendar';
import { FAVICON, PAGE_SCRIPTS } from '../../services/gateway/public/views';

/**
 * Script injection through every public HTML surface. Payloads go into every field a user
 * controls (titles, descriptions, locations, calendar names, internal names, form fields,
 * query parameters); each page is then
 *  - opened in Chromium with its CSP switched off, so that only the escaping stands between
 *    a payload and a running script: no script element, no `on…` attribute, no `javascript:`
 *    address, no dialog, and the payloads' `window.__xss` flag never set;
 *  - for one page of each kind, opened again as served, with its CSP: nothing is blocked
 *    because nothing tries to run;
 *  - read raw: no payload tag in the markup, and a Content-Security-Policy header.
 */

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const NAME = 'xss';
jest.setTimeout(120_000);

const PAYLOADS = [
  '<script>window.__xss=1</script>',
  '"><img src=x onerror="window.__xss=1">',
  "'><svg onload=window.__xss=1>",
  '</title><script>window.__xss=1</script>',
  '</style><script>window.__xss=1</script>',
  '" autofocus onfocus="window.__xss=1" x="',
  "' onmouseover='window.__xss=1' x='",
  'javascript:window.__xss=1',
  '<iframe srcdoc="<script>parent.__xss=1</script>"></iframe>',
  '<math><mtext><table><mglyph><style><img src=x onerror=window.__xss=1>',
  '--><script>window.__xss=1</script><!--',
  '</textarea><script>window.__xss=1</script>',
  '&lt;script&gt;window.__xss=1&lt;/script&gt;',
  '＜script＞window.__xss=1＜/script＞ <b onclick=window.__xss=1>x</b>',
  '<a href="jav&#x09;ascript:window.__xss=1">link</a>',
  '<a href="javascript:window.__xss=1">link</a><form action="javascript:window.__xss=1"><button>go</button></form>',
];

/** Payloads packed into strings of at most `max` characters (fields of 255). */
function chunks(max: number): string[] {
  const out: string[] = [];
  let current = '';
  for (const p of PAYLOADS) {
    if (current && current.length + p.length + 1 > max) {
      out.push(current);
      current = '';
    }
    current = current ? `${current} ${p}` : p;
  }
  return current ? [...out, current] : out;
}

let gw: TestGateway;
let team: TestTeam;
let browser: Browser;
/** One context with the pages' CSP switched off (only escaping protects), one as served. */
let bare: BrowserContext;
let served: BrowserContext;

beforeAll(async () => {
  if (!fs.existsSync(CHROMIUM)) throw new Error(`Chromium not found at ${CHROMIUM}: install it with "apt-get install chromium" (or set CHROMIUM_PATH).`);
  gw = await startSecurityGateway(NAME);
  team = await gw.newTeam({ plan: 'unlimited' });
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'],
  });
  bare = await browser.newContext({ bypassCSP: true, userAgent: BROWSER_UA });
  served = await browser.newContext({ userAgent: BROWSER_UA });
});
afterAll(async () => {
  await browser?.close();
  if (gw) await dropPrefix(gw.redis, securityPrefix(NAME));
  await gw?.close();
});

interface Visit {
  url: string;
  method?: 'GET' | 'POST';
  form?: Record<string, string>;
  headers?: Record<string, string>;
}

// Run in the page (strings: this project type-checks without the DOM library).
const PROVOKE = `(() => {
  for (const el of document.querySelectorAll('body *')) {
    if (el.focus) el.focus();
    el.dispatchEvent(new MouseEvent('mouseover', { bubbles: true }));
  }
  return new Promise((resolve) => requestAnimationFrame(() => setTimeout(resolve, 0)));
})()`;

const INSPECT = `(() => {
  const risky = [];
  for (const el of document.querySelectorAll('*')) {
    for (const attr of el.attributes) {
      if (/^on/i.test(attr.name)) risky.push(el.tagName + ' ' + attr.name);
      // (the favicon: our own drawing, the same on every page)
      if (el.tagName === 'LINK' && attr.name === 'href' && attr.value === ${JSON.stringify(FAVICON)}) continue;
      if (/^(href|src|action|formaction|xlink:href|data|srcdoc)$/i.test(attr.name) && /^(javascript|data|vbscript):/i.test(attr.value.replace(/[\\s\\u0000-\\u001f]/g, ''))) {
        risky.push(el.tagName + ' ' + attr.name + '=' + attr.value);
      }
    }
  }
  // The pages' own: their fixed scripts, the JSON-LD data block and the icons drawn in them.
  const ours = ${JSON.stringify(PAGE_SCRIPTS)};
  const tags = Array.from(document.querySelectorAll('script, iframe, object, embed, base, svg, math, img, meta[http-equiv]'))
    .filter((el) => !(el.tagName === 'SCRIPT' && (el.type === 'application/ld+json' || ours.includes(el.textContent))))
    .filter((el) => !(el.tagName === 'svg' && (el.getAttribute('class') === 'icon' || el.getAttribute('width') === '0')))
    .map((el) => el.tagName);
  return { flag: window.__xss === undefined ? null : String(window.__xss), risky, tags };
})()`;

const submitForm = (url: string, form: Record<string, string>) => `(() => {
  const f = document.createElement('form');
  f.method = 'post';
  f.action = ${JSON.stringify(url)};
  for (const [name, value] of Object.entries(${JSON.stringify(form)})) {
    const input = document.createElement('input');
    input.name = name;
    input.value = value;
    f.append(input);
  }
  document.body.append(f);
  f.submit();
})()`;

interface Seen {
  flag: string | null;
  risky: string[];
  tags: string[];
  dialogs: string[];
  cspViolations: string[];
}

/** What ran, or could run, on the page as the browser built it. */
async function inspect(context: BrowserContext, visit: Visit): Promise<Seen> {
  const page = await context.newPage();
  const dialogs: string[] = [];
  const cspViolations: string[] = [];
  page.on('dialog', (d) => {
    dialogs.push(d.message());
    void d.dismiss();
  });
  page.on('console', (m) => {
    if (/Content Security Policy/i.test(m.text())) cspViolations.push(m.text());
  });
  try {
    if (visit.method === 'POST') {
      // A form post the way a browser sends it, from a page of the service.
      await page.goto(`${gw.baseUrl}/healthz`);
      const navigated = page.waitForNavigation();
      await page.evaluate(submitForm(visit.url, visit.form ?? {}));
      await navigated;
    } else {
      await page.goto(visit.url);
    }
    // Give a payload every chance: focus and hover everything, let timers and handlers run.
    await page.evaluate(PROVOKE);
    const found = (await page.evaluate(INSPECT)) as Omit<Seen, 'dialogs' | 'cspViolations'>;
    return { ...found, dialogs, cspViolations };
  } finally {
    await page.close();
  }
}

/**
 * The page's own markup taken out: its icons, its fixed scripts and the JSON-LD data block
 * (whose JSON holds no `<`: a payload breaking out of it stays, and is found).
 */
function withoutOurMarkup(html: string): string {
  let out = html.split(ICON_SPRITE.value).join('');
  out = out.replace(/<svg class="icon" aria-hidden="true" focusable="false"><use href="#i-[a-z0-9_]+"\/><\/svg>/g, '');
  for (const script of PAGE_SCRIPTS) out = out.split(`<script>${script}</script>`).join('');
  return out.replace(/<script type="application\/ld\+json">[^<]*<\/script>/g, '');
}

/** Every check of one page; answers the problems found. */
async function check(what: string, visit: Visit, opts: { status?: number; served?: boolean } = {}): Promise<string[]> {
  const problems: string[] = [];
  const res = await fetch(visit.url, {
    method: visit.method ?? 'GET',
    headers: { Accept: 'text/html', 'User-Agent': BROWSER_UA, ...(visit.form ? { 'Content-Type': 'application/x-www-form-urlencoded' } : {}), ...visit.headers },
    body: visit.form ? new URLSearchParams(visit.form).toString() : undefined,
  });
  const html = await res.text();
  if (opts.status !== undefined && res.status !== opts.status) problems.push(`${what}: status ${res.status}, expected ${opts.status}`);
  if (!/text\/html/.test(res.headers.get('content-type') ?? '')) problems.push(`${what}: not an HTML page (${res.headers.get('content-type')})`);
  if (!/default-src 'none'/.test(res.headers.get('content-security-policy') ?? '')) problems.push(`${what}: no Content-Security-Policy`);
  const theirs = withoutOurMarkup(html).toLowerCase();
  for (const tag of ['<script', '<img', '<svg', '<iframe', '<math', '<textarea', '<form action="javascript', '<!--']) {
    if (theirs.includes(tag)) problems.push(`${what}: raw ${tag} in the markup`);
  }
  if ((html.match(/<title>/g) ?? []).length !== 1 || (html.match(/<\/title>/g) ?? []).length !== 1) problems.push(`${what}: the title was broken out of`);
  if ((html.match(/<style>/g) ?? []).length !== 1) problems.push(`${what}: the style element was broken out of`);
  if (/\s(href|src|action)\s*=\s*(?:["']\s*)?javascript:/i.test(html)) problems.push(`${what}: a javascript: address`);

  const modes = opts.served ? ([['without CSP', bare], ['with CSP', served]] as const) : ([['without CSP', bare]] as const);
  for (const [mode, context] of modes) {
    const seen = await inspect(context, visit);
    if (seen.flag !== null) problems.push(`${what} (${mode}): a payload ran`);
    if (seen.dialogs.length) problems.push(`${what} (${mode}): dialogs ${seen.dialogs.join(', ')}`);
    if (seen.risky.length) problems.push(`${what} (${mode}): ${seen.risky.join(', ')}`);
    if (seen.tags.length) problems.push(`${what} (${mode}): elements ${seen.tags.join(', ')}`);
    if (context === served && seen.cspViolations.length) problems.push(`${what}: something tried to run: ${seen.cspViolations[0]}`);
  }
  return problems;
}

const allPayloads = PAYLOADS.join('\n\n');

async function hostileCalendar(name: string, extra: Record<string, unknown> = {}) {
  const res = await team.api.post('/api/calendars', { name, internal_name: name, description: allPayloads, timezone: 'UTC', ...extra });
  expect(res.status).toBe(200);
  return res.body.data as { uid: string; public_id: string; public_url: string };
}

async function hostileEvent(cal: { public_id: string }, text: string, extra: Record<string, unknown> = {}) {
  const res = await team.api.post(`/api/calendars/${cal.public_id}/events`, {
    title: text,
    internal_name: text,
    location: text,
    series_title: text,
    description: allPayloads,
    date_start: '2031-07-01 18:00',
    date_end: '2031-07-01 20:00',
    timezone: 'UTC',
    has_rsvp: true,
    ...extra,
  });
  expect(res.status).toBe(200);
  return res.body.data as { uid: string; public_id: string; public_url: string; embed_url: string };
}

it('URL fields refuse javascript: and other non-web addresses', async () => {
  const cal = await hostileCalendar('Addresses');
  for (const url of ['javascript:window.__xss=1', 'JaVaScRiPt:alert(1)', ' javascript:alert(1)', 'data:text/html,<script>alert(1)</script>', 'vbscript:x', '//evil.example/x']) {
    for (const field of ['location_url', 'image_url']) {
      const res = await team.api.post(`/api/calendars/${cal.public_id}/events`, { title: 'x', date_start: '2031-07-01', date_end: '2031-07-01', timezone: 'UTC', [field]: url });
      expect([field, url, res.status]).toEqual([field, url, 422]);
    }
  }
});

it('event pages, embeds and calendar pages escape every field', async () => {
  const problems: string[] = [];
  await Promise.all(
    chunks(255).map(async (text, i) => {
      const cal = await hostileCalendar(text);
      // location_url and image_url take web addresses only; their query can still carry a payload
      const evt = await hostileEvent(cal, text, {
        location_url: `https://example.com/?q=${encodeURIComponent(text.slice(0, 60))}`,
        image_url: `https://example.com/i.png?q=${encodeURIComponent(text.slice(0, 60))}`,
      });
      // a location that is itself an address is shown as a link
      const asLink = await hostileEvent(cal, text, { location: `https://example.com/${encodeURIComponent(text.slice(0, 40))}?"><b>` });
      const served = i === 0;
      problems.push(...(await check(`event page ${i}`, { url: `${evt.public_url}?rsvp=${i % 2 ? 'thanks' : 'received'}` }, { status: 200, served })));
      problems.push(...(await check(`location link ${i}`, { url: asLink.public_url }, { status: 200 })));
      problems.push(...(await check(`embed ${i}`, { url: evt.embed_url }, { status: 200, served })));
      problems.push(...(await check(`calendar page ${i}`, { url: cal.public_url }, { status: 200, served })));
    }),
  );
  expect(problems).toEqual([]);
});

it('RSVP, unlock and subscribe forms escape what was sent back, and their error pages too', async () => {
  const [text] = chunks(255);
  const cal = await hostileCalendar(text, { ask_subscriber_details: true });
  const evt = await hostileEvent(cal, text);
  const locked = await hostileEvent(cal, text, { access_code: 'open-sesame' });
  // Every payload in every field, and as field names.
  const form = { name: allPayloads, email: allPayloads, answer: allPayloads, ...Object.fromEntries(PAYLOADS.slice(0, 4).map((p) => [p, p])) };
  const signed = (await team.api.post(`/api/calendars/${cal.public_id}/events/${locked.public_id}/signed-url`, {})).body.url as string;
  const results = await Promise.all([
    check('RSVP refused', { url: `${gw.baseUrl}/e/${evt.uid}/rsvp`, method: 'POST', form }, { status: 422, served: true }),
    check('RSVP refused, short fields', { url: `${gw.baseUrl}/e/${evt.uid}/rsvp`, method: 'POST', form: { name: text, email: `${text}@x`, answer: 'yes' } }, { status: 422 }),
    check('RSVP saved', { url: `${gw.baseUrl}/e/${evt.uid}/rsvp`, method: 'POST', form: { name: text, email: 'ann@example.com', answer: 'yes' } }),
    check('subscribe form', { url: `${cal.public_url}/subscribe/google` }, { status: 200, served: true }),
    check('subscribe form sent back', { url: `${cal.public_url}/subscribe/google`, method: 'POST', form: { name: text, email: text } }, { status: 422 }),
    check('subscribe form sent back, long', { url: `${cal.public_url}/subscribe/google`, method: 'POST', form }, { status: 422 }),
    check('unlock refused', { url: `${gw.baseUrl}/e/${locked.uid}/unlock`, method: 'POST', form: { access_code: text.slice(0, 64) } }, { status: 403 }),
    check('protected event', { url: locked.public_url }, { status: 403, served: true }),
    check('protected event, signed', { url: signed }, { status: 200 }),
    check('protected event, forged signature', { url: `${locked.public_url}?expires=9999999999&signature=${encodeURIComponent(text)}` }, { status: 403 }),
  ]);
  const problems = results.flat();
  expect(problems).toEqual([]);
});

it('dynamic-link pages escape their query; error pages show nothing of the request', async () => {
  const problems: string[] = [];
  const key = (await team.api.post('/api/dynamic-links', { name: PAYLOADS[0] })).body.data.id as string;
  const q = (params: Record<string, string>) => new URLSearchParams(params).toString();
  for (const [i, text] of chunks(255).entries()) {
    const dyn = `${gw.baseUrl}/api/dyn?${q({ uid: key, title: text, description: allPayloads, location: text, start: '2031-07-01 18:00', timezone: 'UTC' })}`;
    const ade = `${gw.baseUrl}/api/dyn_ade?${q({ client: key, title: text, description: text, location: text, start: '07/01/2031 06:00 PM' })}`;
    problems.push(...(await check(`/api/dyn ${i}`, { url: `${dyn}&${q({ [text]: text })}` }, { status: 200, served: i === 0 })));
    problems.push(...(await check(`/api/dyn_ade ${i}`, { url: ade }, { status: 200 })));
  }
  const [text] = chunks(255);
  const path = encodeURIComponent(text);
  const results = await Promise.all([
    check('/api/dyn refused', { url: `${gw.baseUrl}/api/dyn?${q({ uid: key, title: text, start: text, timezone: text, recurring: text, alarm: text })}` }, { status: 422 }),
    check('/api/dyn unknown key', { url: `${gw.baseUrl}/api/dyn?${q({ uid: `dk_${PAYLOADS[2]}`, title: text, start: '2031-07-01' })}` }, { status: 404 }),
    check('404 page', { url: `${gw.baseUrl}/${path}?${path}=${path}` }, { status: 404, served: true }),
    check('event 404', { url: `${gw.baseUrl}/e/${path}` }, { status: 404 }),
    check('calendar 404', { url: `${gw.baseUrl}/c/${path}` }, { status: 404 }),
    check('malformed path', { url: `${gw.baseUrl}/e/%zz${path}` }, { status: 400 }),
  ]);
  problems.push(...results.flat());
  expect(problems).toEqual([]);
});

it('html_snippets pasted into a page run nothing and show the title as text', async () => {
  const cal = await hostileCalendar('Snippets');
  const problems: string[] = [];
  const page = await bare.newPage();
  const dialogs: string[] = [];
  page.on('dialog', (d) => {
    dialogs.push(d.message());
    void d.dismiss();
  });
  try {
    for (const text of chunks(255)) {
      const created = await team.api.post(`/api/calendars/${cal.public_id}/events?with_html=true`, { title: text, date_start: '2031-07-01 18:00', date_end: '2031-07-01 20:00', timezone: 'UTC' });
      // The iframe variant is the widget's frame and a fixed loader: tags of its own, none of the title's.
      const { iframe, ...links } = created.body.html_snippets as Record<string, string>;
      if ((iframe.match(/</g) ?? []).length !== 4) problems.push(`the iframe snippet holds more than its own tags: ${iframe}`);
      const snippets = Object.values(links).join('\n');
      for (const tag of ['<script', '<img', '<svg', '<iframe', '<math']) if (snippets.toLowerCase().includes(tag)) problems.push(`a snippet holds ${tag}`);
      await page.setContent(`<!doctype html><html><body>${snippets}</body></html>`);
      await page.evaluate(PROVOKE);
      const seen = (await page.evaluate(INSPECT)) as Omit<Seen, 'dialogs' | 'cspViolations'>;
      if (seen.flag !== null || seen.risky.length || seen.tags.length) problems.push(`a snippet: ${JSON.stringify(seen)}`);
      const shown = await page.locator('[data-event-title]').first().getAttribute('data-event-title');
      if (shown !== text) problems.push(`the title is not kept as text: ${shown}`);
    }
  } finally {
    await page.close();
  }
  expect({ problems, dialogs }).toEqual({ problems: [], dialogs: [] });
});

it('the API reference page sets a CSP and takes no outside document or script', async () => {
  const res = await fetch(`${gw.baseUrl}/docs`);
  expect(res.headers.get('content-security-policy')).toMatch(/script-src 'self'/);
  const context = await browser.newContext();
  try {
    const page = await context.newPage();
    const outside: string[] = [];
    const dialogs: string[] = [];
    const problems: string[] = [];
    page.on('request', (r) => {
      if (!r.url().startsWith(gw.baseUrl)) outside.push(r.url());
    });
    page.on('dialog', (d) => {
      dialogs.push(d.message());
      void d.dismiss();
    });
    page.on('console', (m) => {
      if (/Content Security Policy/i.test(m.text())) problems.push(m.text());
    });
    // Swagger UI once read `url`/`configUrl` from the query: a way to load someone else's document.
    await page.goto(`${gw.baseUrl}/docs?url=https://evil.example/x.json&configUrl=https://evil.example/c.json#/${encodeURIComponent(PAYLOADS[1])}`);
    await page.locator('.opblock').first().waitFor();
    // Our own document was loaded, all of it: Swagger UI renders a large one's sections as
    // they are scrolled to, so the operations are counted in its state, not on the page.
    expect(await page.evaluate('window.ui.specSelectors.operations().size')).toBeGreaterThan(100);
    expect(await page.evaluate('window.ui.specSelectors.url()')).toBe('/docs.openapi');
    expect(await page.evaluate('window.__xss === undefined')).toBe(true);
    expect({ outside, dialogs, problems }).toEqual({ outside: [], dialogs: [], problems: [] });
  } finally {
    await context.close();
  }
});
