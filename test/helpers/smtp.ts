import type { AddressInfo } from 'node:net';
import { type ParsedMail, simpleParser } from 'mailparser';
import { SMTPServer, type SMTPServerSession } from 'smtp-server';

/** How the sink answers the end of one message's DATA. */
export type SinkAnswer = 'accept' | 'hold' | { code: number; message: string };

export interface ReceivedMail {
  /** The envelope sender (MAIL FROM), where bounces go. */
  from: string;
  to: string[];
  raw: string;
  parsed: ParsedMail;
  /** The text/calendar part, unfolded into its lines. */
  calendar: string;
}

export interface HeldMail {
  to: string[];
  /** Answers the held message now (a closed connection has already dropped it). */
  answer(answer: SinkAnswer): void;
  /** True once the client's connection closed without an answer: the message was never accepted. */
  dropped(): boolean;
}

export interface SmtpSink {
  url: string;
  port: number;
  /** Messages the sink answered 250 to, in that order. */
  received: ReceivedMail[];
  /** Messages waiting for an answer (policy 'hold'). */
  held: HeldMail[];
  /** How many times a message for this recipient reached the end of DATA (any answer). */
  tries(recipient: string): number;
  for(recipient: string): ReceivedMail[];
  close(): Promise<void>;
}

export interface SinkOptions {
  /** Decides the answer per message: `tries` counts this recipient's DATA ends, this one included. */
  answer?: (mail: { to: string[]; tries: number }) => SinkAnswer;
}

const unfold = (ics: string) => ics.replace(/\r\n[ \t]/g, '');

function calendarPart(parsed: ParsedMail): string {
  const part = parsed.attachments.find((a) => a.contentType === 'text/calendar');
  return part ? unfold(part.content.toString('utf8')) : '';
}

/**
 * A real SMTP server on loopback (the smtp-server package), as the receiving side of the
 * mail worker. A message counts as received only once the sink answers it 250: a message
 * whose connection closes before that is dropped, as a real server drops it.
 */
export async function startSmtpSink(opts: SinkOptions = {}): Promise<SmtpSink> {
  const received: ReceivedMail[] = [];
  const held: HeldMail[] = [];
  const tries = new Map<string, number>();
  const closedSessions = new Set<string>();

  const server = new SMTPServer({
    disabledCommands: ['STARTTLS', 'AUTH'],
    authOptional: true,
    logger: false,
    size: 10 * 1024 * 1024,
    // A held message whose client went away was never accepted: it is dropped.
    onClose(session) {
      closedSessions.add(session.id);
    },
    onData(stream, session: SMTPServerSession, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        const to = session.envelope.rcptTo.map((r) => r.address.toLowerCase());
        for (const r of to) tries.set(r, (tries.get(r) ?? 0) + 1);
        const raw = Buffer.concat(chunks).toString('utf8');
        let open = true;
        const settle = async (answer: SinkAnswer) => {
          if (!open || closedSessions.has(session.id)) return;
          open = false;
          if (answer === 'accept') {
            const parsed = await simpleParser(raw);
            const from = session.envelope.mailFrom ? session.envelope.mailFrom.address : '';
            received.push({ from, to, raw, parsed, calendar: calendarPart(parsed) });
            callback();
          } else if (answer !== 'hold') {
            callback(Object.assign(new Error(answer.message), { responseCode: answer.code }));
          }
        };
        const answer = opts.answer?.({ to, tries: Math.max(...to.map((r) => tries.get(r) ?? 0)) }) ?? 'accept';
        if (answer === 'hold') {
          held.push({ to, answer: (a) => void settle(a), dropped: () => open && closedSessions.has(session.id) });
        } else {
          void settle(answer);
        }
      });
    },
  });
  // A client gone in the middle of a message (a worker a test killed) resets its connection:
  // smtp-server reports it as an 'error' of the server, which, unheard, would end the test
  // process. Its message was never accepted, which is what the tests look at.
  server.on('error', () => undefined);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const port = (server.server.address() as AddressInfo).port;
  return {
    url: `smtp://127.0.0.1:${port}`,
    port,
    received,
    held,
    tries: (r) => tries.get(r.toLowerCase()) ?? 0,
    for: (r) => received.filter((m) => m.to.includes(r.toLowerCase())),
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
