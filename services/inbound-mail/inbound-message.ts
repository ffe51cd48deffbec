import { simpleParser } from 'mailparser';
import { type InboundReplyJob, MAX_REPLY_CALENDAR_CHARS } from '../../shared/queues/inbound-reply.job';

/** What a message received at a reply address says, before it is put on the queue. */
type InboundContent = Pick<InboundReplyJob, 'kind' | 'calendar' | 'contentMethod' | 'bounce' | 'messageId' | 'from'>;

/** Why a message is refused (an SMTP 5xx: it is not worth sending again). */
export class RefusedMessage extends Error {
  constructor(
    message: string,
    readonly enhanced: string,
  ) {
    super(message);
  }
}

const CALENDAR_TYPES = new Set(['text/calendar', 'application/ics', 'text/x-vcalendar']);
const STATUS_TYPES = new Set(['message/delivery-status', 'message/global-delivery-status']);

/**
 * Reads one message: a delivery status notification (RFC 3464: multipart/report with a
 * delivery-status part) becomes a `bounce`; a message with a calendar part (text/calendar
 * as iTIP mail has it, RFC 6047, or an attached application/ics as some clients send)
 * becomes a `reply`, checked further by the worker. Anything else is refused: the address
 * only takes answers from calendar apps, and a person writing to it should write to the
 * organizer instead.
 */
export async function readInboundMessage(raw: Buffer): Promise<InboundContent> {
  const parsed = await simpleParser(raw, { keepDeliveryStatus: true, skipHtmlToText: true, skipTextToHtml: true, skipTextLinks: true, skipImageLinks: true });
  const common = { messageId: headerText(parsed.messageId, 1000), from: headerText(parsed.from?.text, 1000) };
  const status = parsed.attachments.find((a) => STATUS_TYPES.has(a.contentType));
  if (status) return { ...common, kind: 'bounce', bounce: readDeliveryStatus(status.content.toString('utf8')) };
  const calendar = parsed.attachments.find((a) => CALENDAR_TYPES.has(a.contentType));
  if (!calendar) throw new RefusedMessage('This address only takes answers from calendar apps; to write to the organizer, use their own address', '5.6.0');
  const text = calendar.content.toString('utf8');
  if (text.length > MAX_REPLY_CALENDAR_CHARS) throw new RefusedMessage('The calendar part is too large', '5.3.4');
  const method = contentMethod(calendar.headers.get('content-type'));
  return { ...common, kind: 'reply', calendar: text, ...(method ? { contentMethod: method } : {}) };
}

const headerText = (value: string | undefined, max: number) => (value ? value.slice(0, max) : undefined);

/** The `method` parameter of the calendar part's Content-Type (REPLY, COUNTER…), upper-cased. */
function contentMethod(header: unknown): string | undefined {
  const params = (header as { params?: Record<string, string> } | undefined)?.params;
  const method = params?.method;
  return typeof method === 'string' && method.length <= 40 ? method.trim().toUpperCase() : undefined;
}

/**
 * The fields of a delivery-status body (RFC 3464 §2): header-style lines in blocks, the
 * first for the message, one per recipient after it. The first recipient block's Action,
 * Status, Diagnostic-Code and Final-Recipient (their type prefix, `rfc822;`, `smtp;`,
 * dropped). Line by line, no patterns: the text comes from anyone's mail server.
 */
function readDeliveryStatus(body: string): NonNullable<InboundReplyJob['bounce']> {
  const blocks: Array<Map<string, string>> = [];
  let block = new Map<string, string>();
  let last: string | null = null;
  for (const rawLine of body.split('\n')) {
    const line = rawLine.endsWith('\r') ? rawLine.slice(0, -1) : rawLine;
    if (line.trim() === '') {
      if (block.size) blocks.push(block);
      block = new Map();
      last = null;
      continue;
    }
    if ((line.startsWith(' ') || line.startsWith('\t')) && last) {
      block.set(last, `${block.get(last) ?? ''} ${line.trim()}`);
      continue;
    }
    const colon = line.indexOf(':');
    if (colon <= 0) continue;
    last = line.slice(0, colon).trim().toLowerCase();
    block.set(last, line.slice(colon + 1).trim());
  }
  if (block.size) blocks.push(block);
  const recipient = blocks.find((b) => b.has('action')) ?? new Map<string, string>();
  const typed = (v: string | undefined) => {
    if (v === undefined) return null;
    const semi = v.indexOf(';');
    return (semi >= 0 ? v.slice(semi + 1) : v).trim().slice(0, 1000) || null;
  };
  return {
    action: (recipient.get('action') ?? 'unknown').toLowerCase().slice(0, 40),
    status: (recipient.get('status') ?? '').split(' ')[0].slice(0, 40),
    diagnostic: typed(recipient.get('diagnostic-code')),
    recipient: typed(recipient.get('final-recipient') ?? recipient.get('original-recipient'))?.slice(0, 500) ?? null,
  };
}
