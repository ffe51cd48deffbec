import fs from 'node:fs';
import path from 'node:path';
import type { BrowserContext, Page } from 'playwright-core';
import { createSession, sessionCookie } from '../../services/gateway/http/sessions';
import type { TestGateway, TestTeam } from '../helpers/gateway';
import { ROOT } from '../helpers/processes';
import { waitFor } from '../helpers/wait';

export const SHOTS = path.join(ROOT, 'test-artifacts', 'dashboard');

const AXE = fs.readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8');

/** axe-core's serious and critical violations on the page as it is (injected from node_modules; the context bypasses the CSP for it). */
/** Requests in flight on each page watched by watchProblems. */
const inFlight = new WeakMap<Page, number>();

/**
 * Waits until a screen's calls have come back and been drawn: no request in flight (twice,
 * a poll apart: a response can start the next call), no "Loading" status left. A page not
 * watched by watchProblems waits for the browser's network idle (half a second of quiet).
 */
export async function settled(page: Page, what: string): Promise<void> {
  if (!inFlight.has(page)) await page.waitForLoadState('networkidle');
  const loading = page.getByRole('status').filter({ hasText: /^Loading/ });
  let quiet = 0;
  await waitFor(
    async () => {
      quiet = (inFlight.get(page) ?? 0) === 0 ? quiet + 1 : 0;
      return (quiet >= 2 && (await loading.count()) === 0) || undefined;
    },
    { what: `${what} to finish loading` },
  );
}

export async function axeProblems(page: Page): Promise<string[]> {
  await page.addScriptTag({ content: AXE });
  const result = await page.evaluate<{ violations: Array<{ id: string; impact: string; nodes: Array<{ target: string[] }> }> }>('axe.run(document)');
  return result.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical').map((v) => `${v.id} (${v.impact}): ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`);
}

/**
 * A browser context signed in as the team's owner: a real session, made in the database as a
 * sign-in makes it, its cookie set in the browser. (The sign-in itself, from the emailed link,
 * is tested in flows.test.ts.)
 */
export async function signInAs(gw: TestGateway, context: BrowserContext, team: TestTeam): Promise<void> {
  const session = await createSession(gw.db, { userId: team.userId, teamId: team.teamId }, new Date());
  await context.addCookies([{ name: sessionCookie(gw.config).name, value: session.secret, url: gw.baseUrl, httpOnly: true, sameSite: 'Lax' }]);
}

/** What went wrong on a page: script errors and CSP violations (an API's 4xx is the app's business). */
export function watchProblems(page: Page, baseUrl: string): { problems: string[]; outside: string[] } {
  const problems: string[] = [];
  const outside: string[] = [];
  page.on('console', (m) => {
    if (m.type() === 'error' && !m.text().startsWith('Failed to load resource')) problems.push(m.text());
  });
  page.on('pageerror', (e) => problems.push(e.message));
  inFlight.set(page, 0);
  const done = () => inFlight.set(page, (inFlight.get(page) ?? 1) - 1);
  page.on('request', (r) => {
    inFlight.set(page, (inFlight.get(page) ?? 0) + 1);
    if (!r.url().startsWith(baseUrl) && !r.url().startsWith('data:') && !r.url().startsWith('blob:')) outside.push(r.url());
  });
  page.on('requestfinished', done);
  page.on('requestfailed', done);
  return { problems, outside };
}
