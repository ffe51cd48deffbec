import fs from 'node:fs/promises';
import path from 'node:path';
import nodemailer from 'nodemailer';
import type Mail from 'nodemailer/lib/mailer';
import type { Config } from '../../shared/config/config';

export interface SentInfo {
  messageId: string;
  /** The server's reply (`250 …`), or where the message was written. */
  response: string;
}

/** Where messages go: a pooled SMTP connection set, or the outbox folder. */
export interface MailTransport {
  /** For the start-up log line (never credentials). */
  readonly description: Record<string, unknown>;
  send(message: Mail.Options, name: string): Promise<SentInfo>;
  close(): void;
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
      const info = await transporter.sendMail(message);
      return { messageId: info.messageId, response: info.response };
    },
    close: () => transporter.close(),
  };
}

/**
 * Without SMTP_URL: each message is written as an .eml file. The name is fixed per
 * delivery and the file appears whole (written aside, then renamed), so a re-run
 * rewrites the same file instead of adding a second one.
 */
export function outboxTransport(config: Config): MailTransport & { dir: string } {
  const dir = path.resolve(config.outboxDir);
  const transporter = nodemailer.createTransport({ streamTransport: true, buffer: true, newline: 'windows' });
  return {
    dir,
    description: { outbox: dir },
    async send(message, name) {
      const info = await transporter.sendMail(message);
      await fs.mkdir(dir, { recursive: true });
      const file = path.join(dir, `${name}.eml`);
      const partial = `${file}.${process.pid}.partial`;
      await fs.writeFile(partial, info.message as Buffer);
      await fs.rename(partial, file);
      return { messageId: info.messageId, response: `written to ${file}` };
    },
    close: () => transporter.close(),
  };
}

export function createMailTransport(config: Config): MailTransport {
  return config.smtpUrl ? smtpTransport(config) : outboxTransport(config);
}
