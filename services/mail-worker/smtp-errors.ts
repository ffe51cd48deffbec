/** How a failed send is handled: retried later, or recorded failed for good. */
export interface SendFailure {
  permanent: boolean;
  /** The server's reply when there was one (`550 5.1.1 <ann@x>: user unknown`), else the error. */
  reply: string;
}

// Network trouble and timeouts: the message itself is fine, the next attempt may get through.
const TEMPORARY_CODES = new Set([
  'ECONNECTION', 'ETIMEDOUT', 'ESOCKET', 'EDNS', 'ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'EHOSTUNREACH', 'ENETUNREACH', 'EAI_AGAIN', 'ENOTFOUND',
]);

/**
 * SMTP reply classes (RFC 5321 §4.2.1): 4xx is transient, so the message is retried with
 * backoff; 5xx is permanent, so retrying would only be refused again. Two exceptions:
 * a rejected login (EAUTH) is the sender's configuration, not the message, so it is
 * retried until fixed; a message nodemailer cannot even compose or address (EMESSAGE,
 * EENVELOPE without a reply) never will be, so it fails at once.
 */
export function classifySendError(err: unknown): SendFailure {
  const e = (err ?? {}) as { code?: string; responseCode?: number; response?: string; message?: string };
  const reply = (e.response ?? e.message ?? String(err)).trim().slice(0, 1000);
  if (e.code === 'EAUTH') return { permanent: false, reply };
  if (typeof e.responseCode === 'number' && e.responseCode >= 400) return { permanent: e.responseCode >= 500, reply };
  if (e.code && TEMPORARY_CODES.has(e.code)) return { permanent: false, reply };
  if (e.code === 'EMESSAGE' || e.code === 'EENVELOPE') return { permanent: true, reply };
  return { permanent: false, reply };
}
