import addressparser from 'nodemailer/lib/addressparser';

export interface Mailbox {
  name: string;
  email: string;
}

/**
 * One mailbox from a header-style value (`Calendar <no-reply@example.com>` or a bare
 * address), or null when the value is not exactly one address. MAIL_FROM is both the
 * sender and the iTIP ORGANIZER, so it must be a single, real address.
 */
export function parseMailbox(value: string): Mailbox | null {
  const parsed = addressparser(value, { flatten: true });
  if (parsed.length !== 1) return null;
  const [first] = parsed;
  if (!first.address || !/^[^@\s]+@[^@\s]+$/.test(first.address)) return null;
  return { name: first.name, email: first.address };
}
