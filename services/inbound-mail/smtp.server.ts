import fs from 'node:fs';
import type { AddressInfo } from 'node:net';
import { SMTPServer, type SMTPServerAddress, type SMTPServerDataStream, type SMTPServerSession } from 'smtp-server';
import type { Config } from '../../shared/config/config';
import type { Knex } from '../../shared/db/knex';
import { isDbUnavailableError } from '../../shared/db/knex';
import { newUid } from '../../shared/ids/ids';
import { parseReplyAddress, type ReplyToken } from '../../shared/invites/reply-address';
import type { Logger } from '../../shared/logging/logger';
import type { InboundReplyJob } from '../../shared/queues/inbound-reply.job';
import type { Producer } from '../../shared/queues/queues';
import { readInboundMessage, RefusedMessage } from './inbound-message';
import { findReplyHolder } from './replies.repository';

/** Recipients one message may name (all of them reply addresses of ours). */
const MAX_RECIPIENTS = 20;

const smtpError = (code: number, text: string) => Object.assign(new Error(text), { responseCode: code });

export interface InboundSmtp {
  port: number;
  close(): Promise<void>;
}

/**
 * The SMTP server behind REPLY_DOMAIN's MX. It takes mail only for reply addresses the
 * service issued, refusing every other recipient at RCPT (550: the sending server tells its
 * user at once, and nothing is stored); a message over INBOUND_MAX_BYTES is refused (552).
 * A message is answered 250 only once its job is stored in the `inbound-replies` queue;
 * when Redis or Postgres is away the answer is 451, and the sending server tries again
 * later, as SMTP servers do for hours. No AUTH: this server relays nothing.
 */
export async function startInboundSmtp(deps: {
  config: Config;
  db: Knex;
  producer: Producer<InboundReplyJob>;
  logger: Logger;
  /** Counts each message's answer: queued, refused (5xx) or deferred (4xx). */
  count?: (outcome: 'queued' | 'refused' | 'deferred') => void;
}): Promise<InboundSmtp> {
  const { config, db, producer, logger } = deps;
  const count = deps.count ?? (() => undefined);
  const domain = config.replyDomain;
  const tls = config.inboundSmtp.tls;
  const tokens = new WeakMap<SMTPServerSession, ReplyToken[]>();

  const server = new SMTPServer({
    name: domain ?? undefined,
    banner: 'calendar replies',
    size: config.inboundSmtp.maxBytes,
    rejectOversized: true,
    authOptional: true,
    disabledCommands: tls ? ['AUTH'] : ['AUTH', 'STARTTLS'],
    ...(tls ? { key: fs.readFileSync(tls.keyFile), cert: fs.readFileSync(tls.certFile) } : {}),
    maxClients: 200,
    socketTimeout: 60_000,
    logger: false,
    onMailFrom(_address: SMTPServerAddress, session: SMTPServerSession, callback: (err?: Error) => void) {
      tokens.set(session, []);
      callback();
    },
    onRcptTo(address: SMTPServerAddress, session: SMTPServerSession, callback: (err?: Error) => void) {
      const token = domain ? parseReplyAddress(address.address, domain) : null;
      if (!token) {
        count('refused');
        return callback(smtpError(550, '5.1.1 No such recipient here'));
      }
      const taken = tokens.get(session) ?? [];
      if (taken.length >= MAX_RECIPIENTS) return callback(smtpError(452, '4.5.3 Too many recipients'));
      findReplyHolder(db, config.appKey, token)
        .then((holder) => {
          if (!holder) {
            count('refused');
            return callback(smtpError(550, '5.1.1 No such recipient here'));
          }
          taken.push(token);
          tokens.set(session, taken);
          callback();
        })
        .catch((err: unknown) => {
          logger.warn({ err: (err as Error).message?.slice(0, 200) }, 'could not check a reply address');
          count('deferred');
          callback(smtpError(451, isDbUnavailableError(err) ? '4.3.0 Try again later' : '4.3.0 Temporary failure'));
        });
    },
    onData(stream: SMTPServerDataStream, session: SMTPServerSession, callback: (err?: Error | null, message?: string) => void) {
      const chunks: Buffer[] = [];
      let size = 0;
      stream.on('data', (chunk: Buffer) => {
        size += chunk.length;
        if (size <= config.inboundSmtp.maxBytes) chunks.push(chunk);
      });
      stream.on('end', () => {
        if (stream.sizeExceeded) {
          count('refused');
          return callback(smtpError(552, '5.3.4 Message too big'));
        }
        accept(Buffer.concat(chunks), tokens.get(session) ?? []).then(
          (ids) => {
            logger.info({ recipients: ids.length }, 'inbound reply queued');
            count('queued');
            callback(null, `2.0.0 Queued as ${ids[0]}`);
          },
          (err: unknown) => {
            if (err instanceof RefusedMessage) {
              count('refused');
              return callback(smtpError(550, `${err.enhanced} ${err.message}`));
            }
            logger.warn({ err: (err as Error).message?.slice(0, 200) }, 'could not queue an inbound reply');
            count('deferred');
            callback(smtpError(451, '4.3.0 Try again later'));
          },
        );
      });
    },
  });
  server.on('error', (err) => logger.warn({ err: err.message }, 'inbound SMTP error'));

  /** One job per recipient, all stored or none (the message is then answered 451). */
  async function accept(raw: Buffer, recipients: ReplyToken[]): Promise<string[]> {
    const content = await readInboundMessage(raw);
    const receivedAtMs = Date.now();
    return producer.addBulk(
      recipients.map((t) => ({
        name: content.kind,
        data: { ...content, inviteeId: t.inviteeId, mac: t.mac, receivedAtMs },
        opts: { jobId: `inbound-${newUid()}` },
      })),
    );
  }

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(config.inboundSmtp.port, config.inboundSmtp.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const port = (server.server.address() as AddressInfo).port;
  return { port, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}
