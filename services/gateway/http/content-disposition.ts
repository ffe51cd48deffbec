/**
 * Every Content-Disposition the gateway sends is written here (RFC 6266).
 *
 * A file named after a title keeps the title's own script: `filename*` carries the name in
 * UTF-8, percent-encoded (RFC 8187), and every current browser and mail client uses it;
 * `filename` carries an ASCII name for the few that read only that one. Reducing a title
 * to ASCII alone dropped every letter of a title in Japanese or Arabic ("会議 2027" became
 * `2027.ics`).
 */

export interface FileNames {
  /** Letters, digits and dashes of ASCII only: the `filename` every client reads. */
  ascii: string;
  /** The name in any script, sent as `filename*` when it differs from the ASCII one. */
  unicode?: string;
}

/** Longest name before the extension, in characters. */
const MAX_BASE = 60;

/** A title reduced to a file name in its own script: letters, marks and digits, runs of anything else one dash. */
function unicodeBase(title: string): string {
  const base = title
    .normalize('NFC')
    .replace(/[^\p{L}\p{M}\p{N}]+/gu, '-')
    .replace(/^-|-$/g, '')
    .toLowerCase();
  // Cut between characters, never inside a surrogate pair, and not leaving a dash last.
  return Array.from(base).slice(0, MAX_BASE).join('').replace(/-$/, '');
}

/** The title in ASCII: accents dropped (café → cafe), anything else one dash. */
function asciiBase(title: string): string {
  return (
    title
      .normalize('NFKD')
      .replace(/[\u0300-\u036f]/g, '')
      .replace(/[^A-Za-z0-9]+/g, '-')
      // Runs are one dash by now.
      .replace(/^-|-$/g, '')
      .slice(0, MAX_BASE)
      .replace(/-$/, '')
      .toLowerCase()
  );
}

/**
 * File names for a download named after a title ("Quarterly Review: Q3" →
 * `quarterly-review-q3.ics`). When the title's letters are not ASCII the ASCII name says
 * "event" rather than keep the digits alone (`event-2027.ics` beside `会議-2027.ics`).
 */
export function titleFileNames(title: string, extension: string): FileNames {
  const unicode = unicodeBase(title);
  let ascii = asciiBase(title);
  if (!ascii) ascii = 'event';
  else if (!/[a-z]/.test(ascii) && /\p{L}/u.test(title)) ascii = `event-${ascii}`;
  const names: FileNames = { ascii: `${ascii}.${extension}` };
  if (unicode && unicode !== ascii) names.unicode = `${unicode}.${extension}`;
  return names;
}

/** RFC 8187 value-chars: percent-encoded UTF-8, with the characters encodeURIComponent leaves but attr-char does not allow. */
const encodeValue = (value: string) => encodeURIComponent(value).replace(/['()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);

/** The Content-Disposition header value for a download or an inline file. */
export function contentDisposition(type: 'attachment' | 'inline', names: FileNames): string {
  // The ASCII name goes between quotes: keep it to characters that need no escaping there.
  const ascii = names.ascii.replace(/[^\x20-\x7e]|["\\]/g, '_');
  const header = `${type}; filename="${ascii}"`;
  return names.unicode && names.unicode !== names.ascii ? `${header}; filename*=UTF-8''${encodeValue(names.unicode)}` : header;
}
