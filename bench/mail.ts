import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { simpleParser } from 'mailparser';
import { DIST, serviceArgv, startProcess, startWorker } from './lib/processes';
import { row, type BenchRow } from './lib/report';
import { benchEnv, benchTeam, freshDatabase } from './lib/setup';
import { type BenchSink, startBenchSink } from './lib/smtp-sink';

const INVITEES = Number(process.env.BENCH_MAIL_INVITEES ?? 1000);

/**
 * bench/mail: an event with 1000 invitees is deleted with notify_invitees; the figure is
 * the rate from the DELETE to the last cancellation accepted by a local SMTP sink
 * (gateway, queue, mail worker, Postgres and the sink all on this machine). Baseline: the
 * same 1000 messages (as received: sender, recipient, subject, bodies, iTIP part) sent by
 * a bare pooled nodemailer script to the same sink in the same run. Also reported: the
 * same script resending the received bytes as they are, which skips composing entirely.
 * Then 1000 invitations to an event that takes RSVPs, with REPLY_DOMAIN set, as a team
 * sends them: each message has its own answer buttons and reply address (bodies and ORGANIZER
 * made per recipient), timed from the first invites POST to the last message received,
 * against the same script composing those messages.
 */
export async function benchMail(): Promise<BenchRow[]> {
  const { url, db } = await freshDatabase('mail');
  const team = await benchTeam(db);
  const sink = await startBenchSink();
  const prefix = `{bench-mail-${process.pid}}`;
  // The default send rate (MAIL_RATE_PER_SECOND) is a provider limit, not a property of the code: off here.
  const env = benchEnv(url, { QUEUE_PREFIX: prefix, SMTP_URL: sink.url, MAIL_RATE_PER_SECOND: '0', LOG_LEVEL: 'warn', REPLY_DOMAIN: 'replies.bench.example.test' });
  const gateway = await startProcess(serviceArgv('gateway'), env, '/readyz');
  const worker = startWorker(serviceArgv('mail-worker'), env);
  const auth = { Authorization: `Bearer ${team.token}`, 'Content-Type': 'application/json' };
  const call = async (method: string, p: string, body?: unknown) => {
    const res = await fetch(gateway.url + p, { method, headers: auth, body: body === undefined ? undefined : JSON.stringify(body) });
    if (!res.ok) throw new Error(`bench/mail: ${method} ${p} answered ${res.status}: ${await res.text()}`);
    return (await res.json()) as { data: { public_id: string; invitees_notified?: number } };
  };
  try {
    const cal = await call('POST', '/api/calendars', { name: 'Bench', timezone: 'Europe/Berlin' });
    const evt = await call('POST', `/api/calendars/${cal.data.public_id}/events`, {
      title: 'Bench conference',
      description: 'A day of talks.\n\nLunch is provided.',
      location: 'Hall 1',
      date_start: '2027-03-10 09:00',
      date_end: '2027-03-10 17:00',
      timezone: 'Europe/Berlin',
    });
    const eventPath = `/api/calendars/${cal.data.public_id}/events/${evt.data.public_id}`;
    const emails = Array.from({ length: INVITEES }, (_, i) => ({ email: `guest${i}@bench.example.test`, name: `Guest ${i}` }));
    for (let i = 0; i < emails.length; i += 500) await call('POST', `${eventPath}/invites`, { invitees: emails.slice(i, i + 500) });
    // The invitations go out first (and warm up the worker, its pools and the sink).
    await sink.until(INVITEES);

    sink.keep(true);
    const started = performance.now();
    const deleted = await call('DELETE', eventPath, { notify_invitees: true });
    const answeredMs = performance.now() - started;
    if (deleted.data.invitees_notified !== INVITEES) throw new Error(`bench/mail: ${deleted.data.invitees_notified} notified`);
    await sink.until(2 * INVITEES);
    const oursMs = sink.lastAt - started;
    sink.keep(false);

    const composed = await runBaseline(sink, await asMailOptions(sink.kept));
    const resent = await runBaseline(
      sink,
      sink.kept.map((m) => ({ envelope: { from: m.from, to: m.to }, raw: m.raw.toString('base64') })),
    );

    // Invitations with answer buttons and reply addresses: every message its own.
    const answered = await call('POST', `/api/calendars/${cal.data.public_id}/events`, {
      title: 'Bench workshop',
      description: 'Bring a laptop.',
      location: 'Room 2',
      date_start: '2027-03-11 09:00',
      date_end: '2027-03-11 12:00',
      timezone: 'Europe/Berlin',
      has_rsvp: true,
    });
    const answeredPath = `/api/calendars/${cal.data.public_id}/events/${answered.data.public_id}/invites`;
    const before = sink.count;
    sink.kept.length = 0;
    sink.keep(true);
    const invitedAt = performance.now();
    for (let i = 0; i < emails.length; i += 500) await call('POST', answeredPath, { invitees: emails.slice(i, i + 500) });
    await sink.until(before + INVITEES);
    const invitationsMs = sink.lastAt - invitedAt;
    sink.keep(false);
    const invitationsComposed = await runBaseline(sink, await asMailOptions(sink.kept));
    const rate = (ms: number) => (INVITEES / ms) * 1000;
    console.error(
      `bench/mail: ${INVITEES} cancellations in ${oursMs.toFixed(0)} ms (DELETE answered after ${answeredMs.toFixed(0)} ms); ` +
        `bare nodemailer composing them ${composed.toFixed(0)} ms, resending their bytes ${resent.toFixed(0)} ms`,
    );
    return [
      row('mail', `${INVITEES} cancellations: DELETE to last received, vs a bare pooled nodemailer script sending them, msg/s`, rate(oursMs), rate(composed), 'msg/s', { atLeast: 0.7 }),
      row('mail', `same, vs resending the received bytes (no composing), msg/s`, rate(oursMs), rate(resent), 'msg/s', { text: 'reported' }),
      row(
        'mail',
        `${INVITEES} invitations with answer buttons and reply addresses: first POST to last received, vs the bare script composing them, msg/s`,
        rate(invitationsMs),
        rate(invitationsComposed),
        'msg/s',
        { atLeast: 0.7 },
      ),
    ];
  } finally {
    await worker.stop();
    await gateway.stop();
    await sink.close();
    await db.destroy();
    await clearQueue(env.REDIS_URL as string, prefix);
  }
}

/**
 * The received messages as the mail options a script would give nodemailer for them:
 * the same sender, recipient, subject, bodies, iTIP part and Message-ID.
 */
async function asMailOptions(kept: BenchSink['kept']): Promise<object[]> {
  const out: object[] = [];
  for (const m of kept) {
    const mail = await simpleParser(m.raw);
    const calendar = mail.attachments.find((a) => a.contentType === 'text/calendar');
    const to = Array.isArray(mail.to) ? mail.to[0] : mail.to;
    out.push({
      from: mail.from?.text,
      to: to?.value[0],
      subject: mail.subject,
      text: mail.text,
      html: mail.html,
      icalEvent: { method: /^METHOD:(\w+)/m.exec(calendar?.content.toString('utf8') ?? '')?.[1], content: calendar?.content.toString('utf8') },
      messageId: mail.messageId,
      date: mail.date,
      headers: { 'Auto-Submitted': 'auto-generated' },
    });
  }
  return out;
}

/** The bare script, from its first send to the last message the sink took. */
async function runBaseline(sink: BenchSink, messages: object[]): Promise<number> {
  const file = path.join(os.tmpdir(), `bench-mail-${process.pid}.json`);
  fs.writeFileSync(file, JSON.stringify(messages));
  const before = sink.count;
  const child = spawn(process.execPath, [path.join(DIST, 'bench/baselines/mail-nodemailer.js'), file, sink.url], { stdio: ['ignore', 'pipe', 'inherit'] });
  const started = await new Promise<number>((resolve, reject) => {
    child.stdout.on('data', (d: Buffer) => d.toString().includes('sending') && resolve(performance.now()));
    child.once('exit', (code) => reject(new Error(`baseline exited with ${code} before sending`)));
  });
  await sink.until(before + messages.length);
  const ms = sink.lastAt - started;
  await new Promise((resolve) => (child.exitCode === null ? child.once('exit', resolve) : resolve(null)));
  fs.rmSync(file, { force: true });
  return ms;
}

async function clearQueue(redisUrl: string, prefix: string): Promise<void> {
  const connection = new Redis(redisUrl, { maxRetriesPerRequest: null });
  const queue = new Queue('emails', { connection, prefix });
  await queue.obliterate({ force: true });
  await queue.close();
  connection.disconnect();
}
