import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import zlib from 'node:zlib';
import type { Browser } from 'playwright-core';
import { DASHBOARD_CSP } from '../../services/gateway/dashboard/dashboard.routes';
import { launchChromium } from '../helpers/browser';
import { startGateway, type TestGateway } from '../helpers/gateway';
import { ROOT } from '../helpers/processes';

/**
 * How the gateway serves the dashboard built by `npm run build` (dist/dashboard): hashed
 * assets cached for good, index.html never cached and answered for every other /app address,
 * a strict CSP, nothing from other origins, and a 503 page when the build is missing.
 */
const DIST = path.join(ROOT, 'dist', 'dashboard');
const BUDGET = 200 * 1024;

let gw: TestGateway;
let unbuilt: TestGateway;
let empty: string;

beforeAll(async () => {
  if (!fs.existsSync(path.join(DIST, 'index.html'))) throw new Error('dist/dashboard is missing: run `npm run build` before the tests');
  empty = fs.mkdtempSync(path.join(os.tmpdir(), 'dashboard-unbuilt-'));
  gw = await startGateway();
  unbuilt = await startGateway({}, { dashboardDir: path.join(empty, 'dashboard') });
});
afterAll(async () => {
  await gw?.close();
  await unbuilt?.close();
  fs.rmSync(empty, { recursive: true, force: true });
});

/** The files index.html loads: scripts, preloaded modules and styles. */
function referencedAssets(html: string): string[] {
  const urls = [...html.matchAll(/(?:src|href)="(\/app\/assets\/[^"]+)"/g)].map((m) => m[1]);
  return [...new Set(urls)];
}

describe('the dashboard at /app', () => {
  it('serves index.html with a strict CSP, never cached', async () => {
    const res = await fetch(`${gw.baseUrl}/app`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/html/);
    expect(res.headers.get('cache-control')).toBe('no-store');
    const csp = res.headers.get('content-security-policy') ?? '';
    expect(csp).toBe(DASHBOARD_CSP);
    const directives = Object.fromEntries(csp.split('; ').map((d) => [d.split(' ')[0], d.split(' ').slice(1).join(' ')]));
    expect(directives['default-src']).toBe("'none'");
    expect(directives['script-src']).toBe("'self'");
    expect(directives['connect-src']).toBe("'self'");
    expect(directives['frame-ancestors']).toBe("'none'");
    // No inline script, no other origin anywhere in the CSP.
    expect(csp).not.toMatch(/unsafe-inline|unsafe-eval|https?:|\*/);
    const html = await res.text();
    expect(html).toContain('<div id="app">');
    // Every script is a file of our own: none inline, none from elsewhere.
    const scripts = [...html.matchAll(/<script\b([^>]*)>([\s\S]*?)<\/script>/g)];
    expect(scripts.length).toBeGreaterThan(0);
    for (const [, attrs, body] of scripts) {
      expect(attrs).toMatch(/src="\/app\/assets\/[^"]+\.js"/);
      expect(body.trim()).toBe('');
    }
    expect(html).not.toMatch(/(?:src|href)="(?:https?:)?\/\//);
    expect(res.headers.get('referrer-policy')).toBe('no-referrer');
  });

  it('serves index.html for every other /app address (the app routes itself)', async () => {
    const index = await (await fetch(`${gw.baseUrl}/app`)).text();
    for (const address of ['/app/', '/app/events', '/app/events/cal_0123456789abcdef/evt_0123456789abcdef', '/app/sign-in?next=%2Fapp%2Ftokens', '/app/no/such/screen']) {
      const res = await fetch(`${gw.baseUrl}${address}`);
      expect([address, res.status]).toEqual([address, 200]);
      expect(res.headers.get('cache-control')).toBe('no-store');
      expect(res.headers.get('content-security-policy')).toBe(DASHBOARD_CSP);
      await expect(res.text()).resolves.toBe(index);
    }
    // HEAD too; a HEAD of an SPA address has the page's headers and no body.
    const head = await fetch(`${gw.baseUrl}/app/calendars`, { method: 'HEAD' });
    expect(head.status).toBe(200);
    expect(head.headers.get('cache-control')).toBe('no-store');
  });

  it('serves the hashed assets cached for a year, immutable; a missing one is a 404, not the page', async () => {
    const html = await (await fetch(`${gw.baseUrl}/app`)).text();
    const assets = referencedAssets(html);
    expect(assets.some((a) => a.endsWith('.js'))).toBe(true);
    expect(assets.some((a) => a.endsWith('.css'))).toBe(true);
    for (const asset of assets) {
      // A content hash in every name: a new build is new addresses.
      expect(path.basename(asset)).toMatch(/^[a-z]+-[\w-]{8}\.(?:js|css)$/);
      const res = await fetch(`${gw.baseUrl}${asset}`);
      expect([asset, res.status]).toEqual([asset, 200]);
      expect(res.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
      expect(res.headers.get('content-type')).toMatch(asset.endsWith('.js') ? /^(?:text|application)\/javascript/ : /^text\/css/);
      expect(res.headers.get('x-content-type-options')).toBe('nosniff');
    }
    const missing = await fetch(`${gw.baseUrl}/app/assets/index-00000000.js`, { headers: { Accept: 'application/json' } });
    expect(missing.status).toBe(404);
    expect(missing.headers.get('cache-control')).toBe('no-store');
    await expect(missing.json()).resolves.toEqual({ message: 'Not found.' });
  });

  it('takes only reads: anything else at /app is not found, and nothing changes', async () => {
    for (const method of ['POST', 'PUT', 'DELETE', 'PATCH']) {
      const res = await fetch(`${gw.baseUrl}/app/events`, { method, headers: { Accept: 'application/json', 'Content-Type': 'application/json' }, body: '{}' });
      expect([method, res.status]).toEqual([method, 404]);
    }
  });

  it('keeps the JavaScript of the first page load under 200 KB gzipped', async () => {
    const html = await (await fetch(`${gw.baseUrl}/app`)).text();
    const initial = [...html.matchAll(/<script[^>]*\ssrc="([^"]+)"|<link[^>]*rel="modulepreload"[^>]*href="([^"]+)"/g)].map((m) => m[1] ?? m[2]);
    let gzipped = 0;
    for (const url of initial) gzipped += zlib.gzipSync(Buffer.from(await (await fetch(`${gw.baseUrl}${url}`)).arrayBuffer()), { level: 9 }).length;
    expect(gzipped).toBeGreaterThan(0);
    expect(gzipped).toBeLessThan(BUDGET);
  });

  it('answers a clear 503 when the dashboard is not built', async () => {
    const page = await fetch(`${unbuilt.baseUrl}/app/events`, { headers: { Accept: 'text/html' } });
    expect(page.status).toBe(503);
    expect(page.headers.get('cache-control')).toBe('no-store');
    expect(page.headers.get('content-type')).toMatch(/^text\/html/);
    await expect(page.text()).resolves.toContain('npm run build');
    const json = await fetch(`${unbuilt.baseUrl}/app`, { headers: { Accept: 'application/json' } });
    expect(json.status).toBe(503);
    await expect(json.json()).resolves.toEqual({ message: 'The dashboard is not built: run `npm run build`.' });
    // The rest of the service is unaffected.
    expect((await fetch(`${unbuilt.baseUrl}/healthz`)).status).toBe(200);
  });

  describe('in a real browser', () => {
    let browser: Browser;
    beforeAll(async () => {
      browser = await launchChromium();
    });
    afterAll(async () => {
      await browser?.close();
    });

    it('runs under its CSP without a violation, loads nothing from elsewhere, and shows the sign-in screen when signed out', async () => {
      const context = await browser.newContext({ viewport: { width: 390, height: 844 } });
      const page = await context.newPage();
      const problems: string[] = [];
      const outside: string[] = [];
      page.on('console', (m) => {
        // An API answer of 4xx is the app's business (a 401 from GET /api/session is how a
        // signed-out visit starts); a CSP violation or a script error is a problem.
        if (m.type() === 'error' && !m.text().startsWith('Failed to load resource')) problems.push(m.text());
      });
      page.on('pageerror', (e) => problems.push(e.message));
      page.on('request', (r) => {
        if (!r.url().startsWith(gw.baseUrl) && !r.url().startsWith('data:')) outside.push(r.url());
      });
      try {
        await page.goto(`${gw.baseUrl}/app/events`);
        await page.getByRole('heading', { name: 'Sign in' }).waitFor();
        await expect(page.getByLabel('Email').isVisible()).resolves.toBe(true);
        expect(problems).toEqual([]);
        expect(outside).toEqual([]);
      } finally {
        await context.close();
      }
    });
  });
});
