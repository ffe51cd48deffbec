import fs from 'node:fs';
import path from 'node:path';
import type { Browser } from 'playwright-core';
import { launchChromium } from '../helpers/browser';
import { startGateway, type TestGateway } from '../helpers/gateway';
import { ROOT } from '../helpers/processes';

const ADMIN = 'admin-token-0123456789abcdef';
const basic = (password: string) => `Basic ${Buffer.from(`ops:${password}`).toString('base64')}`;
let gw: TestGateway;
beforeAll(async () => {
  gw = await startGateway({ ADMIN_TOKEN: ADMIN });
});
afterAll(() => gw.close());

describe('the queue dashboard', () => {
  it('asks for the admin token (Basic or Bearer) and refuses others', async () => {
    const none = await fetch(`${gw.baseUrl}/admin/queues`);
    expect(none.status).toBe(401);
    expect(none.headers.get('www-authenticate')).toBe('Basic realm="queues", charset="UTF-8"');
    expect((await fetch(`${gw.baseUrl}/admin/queues`, { headers: { Authorization: basic('wrong') } })).status).toBe(401);
    expect((await fetch(`${gw.baseUrl}/admin/queues/api/queues`, { headers: { Authorization: `Bearer ${ADMIN}x` } })).status).toBe(401);
    // An API token is not an admin token.
    const team = await gw.newTeam();
    expect((await fetch(`${gw.baseUrl}/admin/queues/api/queues`, { headers: { Authorization: `Bearer ${team.token}` } })).status).toBe(401);

    const api = await fetch(`${gw.baseUrl}/admin/queues/api/queues`, { headers: { Authorization: `Bearer ${ADMIN}` } });
    expect(api.status).toBe(200);
    const names = ((await api.json()) as { queues: Array<{ name: string }> }).queues.map((q) => q.name).sort();
    expect(names).toEqual(['account-emails', 'emails', 'extractions', 'inbound-replies', 'reminders', 'smart-link-submissions', 'webhooks']);
  });

  it('is not there without ADMIN_TOKEN', async () => {
    const off = await startGateway();
    try {
      expect((await fetch(`${off.baseUrl}/admin/queues`, { headers: { Authorization: basic(ADMIN) } })).status).toBe(404);
    } finally {
      await off.close();
    }
  });

  describe('in a browser', () => {
    let browser: Browser;
    beforeAll(async () => {
      browser = await launchChromium();
    });
    afterAll(() => browser?.close());

    it('shows every queue, loading nothing from other hosts', async () => {
      const context = await browser.newContext({ httpCredentials: { username: 'ops', password: ADMIN }, viewport: { width: 1280, height: 800 } });
      const page = await context.newPage();
      const outside: string[] = [];
      const problems: string[] = [];
      page.on('request', (r) => {
        if (!r.url().startsWith(gw.baseUrl)) outside.push(r.url());
      });
      page.on('console', (m) => {
        if (m.type() === 'error') problems.push(m.text());
      });
      page.on('pageerror', (e) => problems.push(e.message));
      const res = await page.goto(`${gw.baseUrl}/admin/queues`);
      expect(res?.status()).toBe(200);
      expect(res?.headers()['content-security-policy']).toContain("default-src 'self'");
      for (const name of ['emails', 'extractions', 'smart-link-submissions']) await page.getByText(name, { exact: true }).first().waitFor();
      fs.mkdirSync(path.join(ROOT, 'test-artifacts'), { recursive: true });
      await page.screenshot({ path: path.join(ROOT, 'test-artifacts', 'queue-board.png') });
      expect(outside).toEqual([]);
      expect(problems).toEqual([]);
      await context.close();
    });
  });
});
