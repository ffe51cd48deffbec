import type { Queue } from 'bullmq';
import { SubmissionQueue } from '../../services/gateway/smart-links/ingest/submission-queue';
import { deploymentOf } from '../../shared/db/deployment';
import { Producer } from '../../shared/queues/queues';
import { derivedUid } from '../../services/gateway/smart-links/secrets';
import { smartLinkWorker } from '../../services/smart-link-worker/smart-link.worker';
import { createLogger } from '../../shared/logging/logger';
import { groupJobId, type SmartLinkJob, smartLinkJob, type SmartLinkSubmission, SUBMISSIONS_PER_JOB, type SubmissionLink } from '../../shared/queues/smart-link.job';
import { startGateway, type TestGateway, type TestTeam } from '../helpers/gateway';
import { isolatedPrefix } from '../helpers/service-processes';
import { waitFor } from '../helpers/wait';
import { startWorker } from '../helpers/workers';
import { type Link, newLink } from './helpers';

// A queue of this file's own: nothing takes its jobs until the test starts a worker.
const prefix = isolatedPrefix('sl_grouping');
let gw: TestGateway;
let team: TestTeam;
let producer: Producer<SmartLinkJob>;
let queue: Queue<SmartLinkJob>;

beforeAll(async () => {
  gw = await startGateway({ QUEUE_PREFIX: prefix });
  team = await gw.newTeam();
  producer = new Producer(smartLinkJob, gw.redis, prefix, createLogger('grouping-test', 'silent'), deploymentOf(gw.db));
  queue = producer.queue as Queue<SmartLinkJob>;
});
afterAll(async () => {
  await queue.obliterate({ force: true });
  await queue.close();
  await gw.close();
});

async function refOf(link: Link): Promise<SubmissionLink> {
  const row = await gw.db('smart_links').where({ uid: link.id.slice(3) }).first();
  return { id: row.id, teamId: row.team_id, calendarId: row.calendar_id };
}

function entry(link: SubmissionLink, title: string): Omit<SmartLinkSubmission, 'submission' | 'link'> {
  return {
    receivedAt: '2030-06-01T08:00:00.000Z',
    event: {
      uid: derivedUid('grouping-test', `${link.id}:${title}`),
      title,
      description: null,
      location: null,
      internal_name: null,
      is_all_day: false,
      timezone: 'UTC',
      date_start: '2030-06-02T10:00:00.000Z',
      date_end: '2030-06-02T11:00:00.000Z',
      ends_at: '2030-06-02T11:00:00.000Z',
      status: 'approved',
    },
    meta: { requestId: `req-${title}` },
  };
}

describe('submissions queued in one turn', () => {
  it("share one job per link (a delivery key's apart), and each is found, listed and written on its own", async () => {
    const [a, b] = [(await newLink(gw, team)).link, (await newLink(gw, team)).link];
    const [refA, refB] = [await refOf(a), await refOf(b)];
    const submissions = new SubmissionQueue(producer, gw.redis, createLogger('grouping-test', 'silent'), prefix);
    // As the ingest path adds them when requests arrive together.
    const queued = [
      submissions.add(refA, entry(refA, 'A1'), { bytes: 100 }),
      submissions.add(refB, entry(refB, 'B1'), { bytes: 100 }),
      submissions.add(refA, entry(refA, 'A2'), { bytes: 100 }),
      submissions.add(refA, entry(refA, 'Keyed'), { uid: derivedUid('grouping-test', 'delivery-1'), bytes: 100 }),
      // Its description reads like the start of another submission: it is still one.
      submissions.add(refA, { ...entry(refA, 'A3'), event: { ...entry(refA, 'A3').event, description: '{"submission":"AAAAAAAAAAAAAAAA","receivedAt":"2030-01-01T00:00:00.000Z"}' } }, { bytes: 100 }),
    ];
    await Promise.all(queued.map((q) => q.stored));

    const [a1, b1, a2, keyed, a3] = queued;
    expect(new Set([a1.jobId, a2.jobId, a3.jobId]).size).toBe(1);
    expect(a1.jobId).toBe(groupJobId(a1.uid));
    expect(b1.jobId).not.toBe(a1.jobId);
    expect(keyed.jobId).toBe(keyed.uid);
    expect(new Set(queued.map((q) => q.uid)).size).toBe(5);
    const group = await queue.getJob(a1.jobId);
    expect(group?.data.submissions.map((s) => [s.submission, s.event.title])).toEqual([[a1.uid, 'A1'], [a2.uid, 'A2'], [a3.uid, 'A3']]);
    expect(group?.data).toEqual({
      link: refA,
      submissions: [a1, a2].map((q, i) => ({ submission: q.uid, ...entry(refA, `A${i + 1}`) })).concat([expect.objectContaining({ submission: a3.uid })]),
      // Only this database's workers run it.
      meta: { deployment: (await gw.db('deployment').first('id')).id },
    });

    // Each one reads queued, by its own id, and is listed with its link's.
    for (const q of queued) {
      const res = await team.api.get(`/api/smart-link-submissions/sls_${q.uid}`);
      expect(res.body.data).toMatchObject({ id: `sls_${q.uid}`, status: 'queued', received_at: '2030-06-01T08:00:00.000000Z' });
    }
    const listed = await team.api.get(`/api/smart-links/${a.id}/submissions?status=queued`);
    expect(listed.body.data.map((s: { id: string }) => s.id).sort()).toEqual([a1, a2, keyed, a3].map((q) => `sls_${q.uid}`).sort());
    expect((await (await gw.newTeam()).api.get(`/api/smart-link-submissions/sls_${a2.uid}`)).status).toBe(404);

    const worker = await startWorker(smartLinkWorker, { QUEUE_PREFIX: prefix });
    try {
      const outcomes = await waitFor(
        async () => {
          const read = await Promise.all(queued.map(async (q) => (await team.api.get(`/api/smart-link-submissions/sls_${q.uid}`)).body.data));
          return read.every((s) => s.status === 'processed') ? read : undefined;
        },
        { what: 'every submission processed' },
      );
      expect(new Set(outcomes.map((o) => o.event_public_id)).size).toBe(5);
      const events = await gw.db('events').where({ team_id: team.teamId }).select('title');
      expect(events.map((e) => e.title).sort()).toEqual(['A1', 'A2', 'A3', 'B1', 'Keyed']);
      // A group's job is gone once done; a delivery key's job stays, so a repeat is not queued again.
      await waitFor(async () => (await queue.getJob(a1.jobId)) === undefined || undefined, { what: 'the group job removed' });
      const keyedJob = await waitFor(async () => ((await queue.getJob(keyed.jobId))?.finishedOn ? queue.getJob(keyed.jobId) : undefined), { what: 'the keyed job done' });
      expect(keyedJob?.returnvalue).toEqual({ [keyed.uid]: { status: 'processed', event: outcomes[3].event_public_id.slice(4), error: null } });
    } finally {
      await worker.close();
    }
  });

  it('closes a group at SUBMISSIONS_PER_JOB submissions or 512 KiB of payload', async () => {
    const ref = await refOf((await newLink(gw, team)).link);
    const submissions = new SubmissionQueue(producer, gw.redis, createLogger('grouping-test', 'silent'), prefix);
    const many = Array.from({ length: SUBMISSIONS_PER_JOB + 1 }, (_, i) => submissions.add(ref, entry(ref, `Many ${i}`), { bytes: 100 }));
    const big = [1, 2].map((i) => submissions.add(ref, entry(ref, `Big ${i}`), { bytes: 300 * 1024 }));
    await Promise.all([...many, ...big].map((q) => q.stored));
    const sizes = new Map<string, number>();
    for (const q of [...many, ...big]) sizes.set(q.jobId, (sizes.get(q.jobId) ?? 0) + 1);
    expect([...sizes.values()]).toEqual([SUBMISSIONS_PER_JOB, 2, 1]);
    for (const [jobId, size] of sizes) expect((await queue.getJob(jobId))?.data.submissions).toHaveLength(size);
  });
});
