import fs from 'node:fs';
import path from 'node:path';
import type { BrowserContext, Page } from 'playwright-core';
import type { TestGateway, TestTeam } from '../helpers/gateway';
import { ROOT } from '../helpers/processes';

export const SHOTS = path.join(ROOT, 'test-artifacts', 'dashboard');

const AXE = fs.readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8');

/** axe-core's serious and critical violations on the page as it is (injected from node_modules; the context bypasses the CSP for it). */
export async function axeProblems(page: Page): Promise<string[]> {
  await page.addScriptTag({ content: AXE });
  const result = await page.evaluate<{ violations: Array<{ id: string; impact: string; nodes: Array<{ target: string[] }> }> }>('axe.run(document)');
  return result.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical').map((v) => `${v.id} (${v.impact}): ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`);
}

/** Whether the gateway declares the session routes (they are built beside the dashboard). */
export const hasSessionApi = (gw: TestGateway) => Boolean((gw.openapi.paths as Record<string, unknown>)['/api/session']);

/**
 * A browser context signed in as the team's owner. Until the gateway has session routes, the
 * context sends the team's token and answers GET /api/session (and the token and member
 * lists) as their contract says, so every other screen runs against the real API.
 */
export async function signInAs(gw: TestGateway, context: BrowserContext, team: TestTeam): Promise<void> {
  if (hasSessionApi(gw)) throw new Error('the session API is here: sign in through it');
  await context.setExtraHTTPHeaders({ Authorization: `Bearer ${team.token}` });
  const account = (await team.api.get('/api/account')).body.data;
  const session = {
    user: { id: account.user.id, name: account.user.name, email: account.user.email, role: 'owner', has_password: false },
    team: account.team,
    csrf_token: 'csrf-test',
    expires_at: null,
  };
  const json = (body: unknown) => ({ status: 200, contentType: 'application/json', body: JSON.stringify(body) });
  await context.route('**/api/session', (route) => route.fulfill(json({ data: session })));
  await context.route('**/api/auth/options', (route) => route.fulfill(json({ data: { signup: 'closed', password_sign_in: true } })));
  await context.route('**/api/tokens', (route) =>
    route.fulfill(
      json({
        data: [
          { id: 'tok_1', kind: 'api', name: 'CRM sync', user: { id: account.user.id, name: account.user.name }, created_at: '2026-11-01T10:00:00Z', last_used_at: '2026-11-26T09:12:00Z' },
          { id: 'tok_2', kind: 'extension', name: 'browser extension', user: { id: account.user.id, name: account.user.name }, created_at: '2026-11-02T10:00:00Z', last_used_at: null },
        ],
      }),
    ),
  );
  await context.route('**/api/members', (route) =>
    route.fulfill(
      json({
        data: [
          { id: account.user.id, name: account.user.name, email: account.user.email, role: 'owner', status: 'active', created_at: '2026-11-01T10:00:00Z', last_sign_in_at: '2026-11-27T08:00:00Z' },
          { id: 'usr_2', name: 'Bea Admin', email: 'bea@example.com', role: 'admin', status: 'active', created_at: '2026-11-03T10:00:00Z', last_sign_in_at: null },
          { id: 'usr_3', name: 'Cy Member', email: 'cy@example.com', role: 'member', status: 'invited', created_at: '2026-11-04T10:00:00Z', last_sign_in_at: null },
        ],
      }),
    ),
  );
}

/** What went wrong on a page: script errors and CSP violations (an API's 4xx is the app's business). */
export function watchProblems(page: Page, baseUrl: string): { problems: string[]; outside: string[] } {
  const problems: string[] = [];
  const outside: string[] = [];
  page.on('console', (m) => {
    if (m.type() === 'error' && !m.text().startsWith('Failed to load resource')) problems.push(m.text());
  });
  page.on('pageerror', (e) => problems.push(e.message));
  page.on('request', (r) => {
    if (!r.url().startsWith(baseUrl) && !r.url().startsWith('data:') && !r.url().startsWith('blob:')) outside.push(r.url());
  });
  return { problems, outside };
}
