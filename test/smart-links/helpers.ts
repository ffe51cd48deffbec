import { smartLinkWorker } from '../../services/smart-link-worker/smart-link.worker';
import type { TestGateway, TestTeam } from '../helpers/gateway';
import { waitFor } from '../helpers/wait';
import { startWorker } from '../helpers/workers';

export const startSmartLinkWorker = (env: Record<string, string> = {}) => startWorker(smartLinkWorker, env);

export interface Link {
  id: string;
  key: string;
  url: string;
  signing_secret: string;
  calendar_uid: string;
}

export async function newLink(_gw: TestGateway, team: TestTeam, opts: Record<string, unknown> = {}, calendar?: { public_id: string }) {
  const cal = calendar ?? (await team.api.post('/api/calendars', { name: 'Inbox', timezone: 'America/New_York' })).body.data;
  const res = await team.api.post('/api/smart-links', { name: 'Form', calendar: cal.public_id, ...opts });
  if (res.status !== 200) throw new Error(`could not create a link: ${res.text}`);
  return { link: res.body.data as Link, calendar: cal as { public_id: string; uid: string } };
}

export async function submitForm(url: string, fields: Record<string, string>, headers: Record<string, string> = {}) {
  const res = await fetch(url, { method: 'POST', headers: { 'Content-Type': 'application/x-www-form-urlencoded', ...headers }, body: new URLSearchParams(fields).toString(), redirect: 'manual' });
  const text = await res.text();
  return { status: res.status, headers: res.headers, body: text ? JSON.parse(text) : null };
}

/** Waits until the submission has its outcome recorded, and answers it. */
export async function outcomeOf(team: Pick<TestTeam, 'api'>, submissionId: string) {
  return waitFor(
    async () => {
      const res = await team.api.get(`/api/smart-link-submissions/${submissionId}`);
      return res.status === 200 && res.body.data.status !== 'queued' ? res.body.data : undefined;
    },
    { what: `the outcome of ${submissionId}`, timeoutMs: 15_000 },
  );
}
