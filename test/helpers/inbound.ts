import fs from 'node:fs';
import path from 'node:path';
import nodemailer from 'nodemailer';

/** Replies and bounces as real calendar apps and mail servers send them (see SOURCES.md there). */
const FIXTURES = path.join(__dirname, '../fixtures/itip-replies');

/** A fixture with its placeholders filled, and its {{BASE64}} blocks encoded as the client sends them. */
export function replyFixture(name: string, values: Record<string, string>): string {
  let text = fs.readFileSync(path.join(FIXTURES, name), 'utf8');
  for (const [key, value] of Object.entries(values)) text = text.split(`{{${key}}}`).join(value);
  const open = '{{BASE64}}\r\n';
  const close = '{{/BASE64}}';
  for (let at = text.indexOf(open); at >= 0; at = text.indexOf(open)) {
    const end = text.indexOf(close, at);
    const encoded = Buffer.from(text.slice(at + open.length, end)).toString('base64').replace(/.{76}/g, '$&\r\n');
    text = `${text.slice(0, at)}${encoded}${text.slice(end + close.length)}`;
  }
  if (text.includes('{{')) throw new Error(`fixture ${name} has a placeholder left: ${text.slice(text.indexOf('{{'), text.indexOf('{{') + 40)}`);
  return text;
}

/** Sends a message to an inbound SMTP server as a mail server would (a real SMTP client); answers its reply or error. */
export async function deliverTo(port: number, to: string, raw: string, from = 'mta@sender.example.test'): Promise<{ ok: boolean; code?: number; response: string }> {
  const client = nodemailer.createTransport({ host: '127.0.0.1', port, secure: false, ignoreTLS: true });
  try {
    const info = await client.sendMail({ envelope: { from, to }, raw });
    return { ok: true, response: info.response };
  } catch (err) {
    const e = err as { responseCode?: number; response?: string; message: string };
    return { ok: false, code: e.responseCode, response: e.response ?? e.message };
  } finally {
    client.close();
  }
}
