import { Queue } from 'bullmq';
import { dropDatabase } from '../../shared/db/knex';
import { prepareDatabase } from '../../shared/db/prepare';
import { extractionJob } from '../../shared/queues/extraction.job';
import { mailJob } from '../../shared/queues/mail.job';
import { smartLinkJob } from '../../shared/queues/smart-link.job';
import { FaultTally } from '../helpers/fault-summary';
import { startGateway, type TestGateway, type TestTeam } from '../helpers/gateway';
import { crash, drained, isolatedPrefix, logLines, spawnWorker, type WorkerKind, type WorkerProcess } from '../helpers/service-processes';
import { type SmtpSink, startSmtpSink } from '../helpers/smtp';
import { waitFor } from '../helpers/wait';
import { newLink, submitForm } from '../smart-links/helpers';
import { auditSubmissions } from './fault-checks';

/**
 * Two deployments, each with its own database, given one Redis and one QUEUE_PREFIX (staging
 * beside production, or a database recreated in place while its Redis kept the old jobs).
 * Both databases hand out the same row ids (each starts at 1), and both sets of workers take
 * jobs from the same queues. Every invitation of both is delivered once, to its own invitee,
 * with its own event; every submission of both becomes one event in its own database; every
 * extraction of both completes in its own database.
 */
jest.setTimeout(180_000);

const prefix = isolatedPrefix('shared_redis');
const dbB = `${process.env.TEST_DATABASE_URL}_shared_b`;
const WORKERS: WorkerKind[] = ['smart-link-worker', 'extraction-worker', 'mail-worker'];

interface Deployment {
  name: string;
  gw: TestGateway;
  workers: WorkerProcess[];
}

let sink: SmtpSink;
let a: Deployment;
let b: Deployment;
const queues: Queue[] = [];

async function deploy(name: string, databaseUrl: string): Promise<Deployment> {
  const env = { DATABASE_URL: databaseUrl, QUEUE_PREFIX: prefix };
  const gw = await startGateway(env);
  const workers = await Promise.all(
    WORKERS.map((kind) => spawnWorker(kind, { ...env, SMTP_URL: sink.url, MAIL_RATE_PER_SECOND: '0', WORKER_LOCK_MS: '2000' })),
  );
  return { name, gw, workers };
}

beforeAll(async () => {
  sink = await startSmtpSink();
  await prepareDatabase(dbB);
  a = await deploy('A', process.env.TEST_DATABASE_URL as string);
  b = await deploy('B', dbB);
  for (const name of [smartLinkJob.queue, extractionJob.queue, mailJob.queue]) queues.push(new Queue(name, { connection: a.gw.redis, prefix }));
});
afterAll(async () => {
  for (const d of [a, b]) for (const w of d?.workers ?? []) await crash(w);
  for (const q of queues) {
    await q.obliterate({ force: true });
    await q.close();
  }
  for (const d of [a, b]) await d?.gw.close();
  await dropDatabase(dbB);
  await sink.close();
});

let invitations = 0;
async function invite(d: Deployment, team: TestTeam, count: number) {
  const n = ++invitations;
  const cal = (await team.api.post('/api/calendars', { name: 'Main', timezone: 'UTC' })).body.data;
  const title = `Deployment ${d.name} all hands ${n}`;
  const evt = (await team.api.post(`/api/calendars/${cal.public_id}/events`, { title, date_start: '2030-03-02 15:00', date_end: '2030-03-02 16:00', timezone: 'UTC' })).body.data;
  const emails = Array.from({ length: count }, (_, i) => `${d.name.toLowerCase()}${n}-guest${i}@example.test`);
  const res = await team.api.post(`/api/calendars/${cal.public_id}/events/${evt.public_id}/invites`, { invitees: emails.map((email) => ({ email })) });
  expect(res.status).toBe(200);
  return { emails, title, uid: evt.uid as string };
}

describe('two databases on one Redis and QUEUE_PREFIX', () => {
  it('delivers every invitation of both, once, to the right person with the right event', async () => {
    const tally = new FaultTally('6a. two databases, one Redis and prefix: invitations', 'email');
    const [teamA, teamB] = [await a.gw.newTeam(), await b.gw.newTeam()];
    // A first: its jobs are done (and kept a day) before B's rows, numbered alike, are queued.
    const sentA = await invite(a, teamA, 25);
    await waitFor(() => sentA.emails.every((e) => sink.for(e).length > 0), { what: "A's invitations", timeoutMs: 30_000 });
    const sentB = await invite(b, teamB, 25);
    const more = await Promise.all([invite(a, teamA, 15), invite(b, teamB, 15)]);
    const all = [sentA, sentB, ...more];
    const emails = all.flatMap((s) => s.emails);
    tally.acceptedItems(emails.length);
    await waitFor(() => emails.every((e) => sink.for(e).length > 0), { what: 'every invitation of both', timeoutMs: 60_000 });
    await waitFor(async () => (await Promise.all(queues.map(drained))).every(Boolean), { what: 'the queues to drain', timeoutMs: 30_000 });

    let wrong = 0;
    for (const s of all) {
      for (const email of s.emails) {
        const [mail] = sink.for(email);
        if (!mail.parsed.subject?.includes(s.title) || !mail.calendar?.includes(`UID:evt_${s.uid}@`)) wrong++;
      }
    }
    tally.lost = emails.filter((e) => sink.for(e).length === 0).length + wrong;
    tally.duplicated = emails.reduce((n, e) => n + Math.max(0, sink.for(e).length - 1), 0);
    for (const d of [a, b]) {
      const rows: Array<{ status: string }> = await d.gw.db('deliveries').whereIn('email', emails).select('status');
      tally.lost += rows.filter((r) => r.status !== 'sent').length;
    }
    tally.note = "A's invitations done first, then B's (row ids alike) and both at once; each worker runs only its own database's jobs";
    tally.save();
    expect(wrong).toBe(0);
    expect(tally.lost).toBe(0);
    expect(tally.duplicated).toBe(0);
    // Both sets of workers took jobs of the other database, and left them for their own.
    const leftAlone = (d: Deployment) => d.workers.some((w) => logLines(w, 'a job of another database is in this queue: QUEUE_PREFIX is shared by two deployments on one Redis; it is left for its own workers').length > 0);
    expect(leftAlone(a) || leftAlone(b)).toBe(true);
  });

  it('turns every submission of both into one event of its own database, and completes every extraction in its own', async () => {
    const tally = new FaultTally('6b. two databases, one Redis and prefix: submissions and extractions', 'submission or extraction');
    const [teamA, teamB] = [await a.gw.newTeam({ plan: 'unlimited' }), await b.gw.newTeam({ plan: 'unlimited' })];
    const [linkA, linkB] = [(await newLink(a.gw, teamA)).link, (await newLink(b.gw, teamB)).link];
    const accepted = { A: new Map<string, string>(), B: new Map<string, string>() };
    const extractions = { A: new Map<string, number>(), B: new Map<string, number>() };
    await Promise.all(
      Array.from({ length: 150 }, async (_, i) => {
        for (const [name, link] of [['A', linkA], ['B', linkB]] as const) {
          const title = `Shared ${name} ${i}`;
          const res = await tally.send(() => submitForm(link.url, { title, start: '2030-04-01 10:00', duration: '30' }));
          if (res?.status === 202) accepted[name].set(res.body.data.id as string, title);
        }
      }),
    );
    await Promise.all(
      Array.from({ length: 20 }, async (_, i) => {
        for (const [name, team] of [['A', teamA], ['B', teamB]] as const) {
          const res = await tally.send(() => team.api.post('/api/events/extract', { text: `Review ${name}${i} next Tuesday at 1pm at Cafe Luna`, timezone: 'UTC', reference_date: '2030-01-01T09:00:00Z' }));
          if (res?.status === 202) extractions[name].set(res.body.data.id as string, i);
        }
      }),
    );
    await waitFor(async () => (await Promise.all(queues.map(drained))).every(Boolean), { what: 'the queues to drain', timeoutMs: 60_000 });

    for (const [d, team, name] of [[a, teamA, 'A'], [b, teamB, 'B']] as const) {
      const audit = await auditSubmissions(d.gw.db, team.teamId, accepted[name]);
      tally.lost += audit.lost + audit.unacceptedStored;
      tally.duplicated += audit.duplicated;
      const rows: Array<{ uid: string; status: string; result: { title: string } | null }> = await d.gw.db('extractions').where({ team_id: team.teamId }).select('uid', 'status', 'result');
      const right = rows.filter((r) => r.status === 'completed' && r.result?.title === `Review ${name}${extractions[name].get(`ext_${r.uid}`)}`);
      tally.lost += extractions[name].size - right.length;
    }
    tally.note = '150 submissions and 20 extractions to each deployment at once';
    tally.save();
    expect(accepted.A.size + accepted.B.size).toBe(300);
    expect(tally.lost).toBe(0);
    expect(tally.duplicated).toBe(0);
    for (const q of queues) expect(await q.getFailedCount()).toBe(0);
  });
});
