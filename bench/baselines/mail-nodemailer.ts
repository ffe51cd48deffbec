import fs from 'node:fs';
import nodemailer from 'nodemailer';
import type Mail from 'nodemailer/lib/mailer';

/**
 * Baseline of bench/mail: a bare script that sends the same messages through one pooled
 * nodemailer transport (its default pool: 5 connections), as fast as the sink takes them.
 * Arguments: a JSON file of messages and the SMTP URL. Each message is either nodemailer
 * mail options (composed by nodemailer as any script would: subject, bodies, icalEvent)
 * or `{envelope, raw}` (base64 bytes resent as they are, no composing at all).
 * Prints "sending" just before the first message goes out, so the clock starts there.
 */
type Stored = Mail.Options | { envelope: { from: string; to: string[] }; raw: string };

async function main(): Promise<void> {
  const messages = (JSON.parse(fs.readFileSync(process.argv[2], 'utf8')) as Stored[]).map((m) =>
    'raw' in m && typeof m.raw === 'string' ? { envelope: m.envelope, raw: Buffer.from(m.raw, 'base64') } : m,
  );
  const transport = nodemailer.createTransport({ url: process.argv[3], pool: true });
  process.stdout.write('sending\n');
  await Promise.all(messages.map((m) => transport.sendMail(m)));
  transport.close();
}

main().catch((err) => {
  process.stderr.write(`${err instanceof Error ? err.stack : String(err)}\n`);
  process.exit(1);
});
