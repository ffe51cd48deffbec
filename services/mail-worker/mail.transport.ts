import fs from 'node:fs/promises';
import path from 'node:path';
import nodemailer from 'nodemailer';
import MailComposer from 'nodemailer/lib/mail-composer';
import type { Config } from '../../shared/config/config';

interface SentInfo {
  messageId: string;
  /** The server's reply (`250 …`), or where the message was written. */
  response: string;
}

/** Where messages go: a pooled SMTP connection set, or the outbox folder. */
export interface MailTransport {
  /** For the start-up log line (never credentials). */
  readonly description: Record<string, unknown>;
  send(message: MailComposer.Options, name: string): Promise<SentInfo>;
  close(): void;
}

/**
 * The message as bytes, with its envelope. Built whole before it meets the socket, so the
 * SMTP connection writes it in a few large chunks instead of one small write per MIME
 * header and line, which was most of the sending cost.
 */
async function compose(message: MailComposer.Options) {
  const node = new MailComposer(message).compile();
  return { raw: await node.build(), envelope: node.getEnvelope(), messageId: node.messageId() };
}

/** A pool of SMTP connections (SMTP_URL), shared by every job of the process. */
export function smtpTransport(config: Config): MailTransport {
  const url = config.smtpUrl as string;
  const transporter = nodemailer.createTransport({
    url,
    pool: true,
    maxConnections: config.mail.poolSize,
    // A server that stops answering must not hold a job for nodemailer's default ten minutes.
    connectionTimeout: 15_000,
    greetingTimeout: 15_000,
    socketTimeout: 60_000,
  });
  const parsed = new URL(url);
  return {
    description: { smtp: `${parsed.protocol}//${parsed.hostname}:${parsed.port || 'default'}`, pool: config.mail.poolSize },
    async send(message) {
      const { raw, envelope, messageId } = await compose(message);
      const info = await transporter.sendMail({ envelope, raw });
      return { messageId, response: info.response };
    },
    close: () => transporter.close(),
  };
}

/**
 * Without SMTP_URL: each message is written as an .eml file. The name is fixed per
 * delivery and the file appears whole (written aside, then renamed), so a re-run
 * rewrites the same file instead of adding a second one.
 */
function outboxTransport(config: Config): MailTransport & { dir: string } {
  const dir = path.resolve(config.outboxDir);
  return {
    dir,
    description: { outbox: dir },
    async send(message, name) {
      const { raw, messageId } = await compose(message);
      await fs.mkdir(dir, { recursive: true });
      const file = path.join(dir, `${name}.eml`);
      const partial = `${file}.${process.pid}.partial`;
      await fs.writeFile(partial, raw);
      await fs.rename(partial, file);
      return { messageId, response: `written to ${file}` };
    },
    close: () => undefined,
  };
}

export function createMailTransport(config: Config): MailTransport {
  return config.smtpUrl ? smtpTransport(config) : outboxTransport(config);
}
