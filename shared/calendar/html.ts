import sanitizeHtml from 'sanitize-html';

const ALLOWED: sanitizeHtml.IOptions = {
  allowedTags: ['p', 'br', 'strong', 'b', 'em', 'i', 'u', 's', 'a', 'ul', 'ol', 'li', 'blockquote', 'code', 'pre', 'h2', 'h3', 'h4', 'hr', 'span'],
  // rel and target are set by the transform below, never taken from the input.
  allowedAttributes: { a: ['href', 'title', 'rel', 'target'] },
  allowedSchemes: ['http', 'https', 'mailto', 'tel'],
  allowProtocolRelative: false,
  transformTags: {
    a: sanitizeHtml.simpleTransform('a', { rel: 'noopener noreferrer nofollow', target: '_blank' }),
  },
};

// Input counts as HTML when it uses real HTML tags; a stray `<x>` typed in text stays
// text (escaped), and a <script> is HTML that the sanitizer removes. A tag is the start of
// one (`<p`, `</li`) closed at once (`>`, `/>`) or followed by a space and, somewhere
// after, a `>`.
const HTML_TAG_START =
  /<\/?(?:p|br|div|span|a|b|strong|i|em|u|s|strike|ul|ol|li|h[1-6]|blockquote|pre|code|hr|img|script|style|iframe|table|thead|tbody|tr|td|th|font|center|section|article|header|footer|nav|form|input|button|svg|math|object|embed|link|meta|base|video|audio|source|details|summary)(?:\s|\/?>)/i;

/**
 * Whether the text uses real HTML tags. One pattern with "a space, then anything up to a
 * `>`" read the rest of the text again from every tag start that had no `>` after it:
 * 50,000 characters of `<p ` took 0.3-0.7 s. The first tag start decides instead: if any
 * `>` follows it, that tag is closed; if none does, no later one can be.
 */
export function looksLikeHtml(text: string): boolean {
  const start = HTML_TAG_START.exec(text);
  return start !== null && text.lastIndexOf('>') > start.index;
}

const HTML_SPECIAL = /[&<>"']/;
const HTML_SPECIALS = /[&<>"']/g;
const ENTITIES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

/** Text for HTML: `& < > " '` as entities, in one pass (most values have none: returned as they are). */
export function escapeHtml(value: string): string {
  return HTML_SPECIAL.test(value) ? value.replace(HTML_SPECIALS, (c) => ENTITIES[c]) : value;
}

/**
 * Event and calendar descriptions are stored as safe HTML. Plain text becomes paragraphs
 * (blank lines split them, single newlines become <br>); HTML keeps a small allowlist.
 */
export function sanitizeDescription(input: string): string {
  const text = input.replace(/\r\n?/g, '\n').trim();
  if (!text) return '';
  if (!looksLikeHtml(text)) {
    return text
      .split(/\n{2,}/)
      .map((para) => `<p>${escapeHtml(para.trim()).replace(/\n/g, '<br>')}</p>`)
      .join('');
  }
  return sanitizeHtml(text, ALLOWED).trim();
}

// The only entities sanitize-html writes in text (it writes `"` and `'` as they are).
const TEXT_OF_ENTITY: Record<string, string> = { amp: '&', lt: '<', gt: '>' };

/** The text of stored description HTML (for ICS, emails and platform links). */
export function htmlToText(html: string): string {
  return sanitizeHtml(
    html
      .replace(/<br\s*\/?>/gi, '\n')
      // A list reads as one block of "- item" lines, a paragraph apart from what surrounds it.
      .replace(/<\/li>/gi, '\n')
      .replace(/<\/(p|ul|ol|h[1-6]|blockquote|pre)>/gi, '\n\n')
      // Sanitized HTML escapes every < that starts no tag, so a tag ends before the next <;
      // stopping there, a run of `<ol` without a `>` is not read to its end from each one.
      .replace(/<(ul|ol)\b[^<>]*>/gi, '\n\n')
      .replace(/<li\b[^<>]*>/gi, '- '),
    { allowedTags: [], allowedAttributes: {} },
  )
    // In one pass: `&amp;lt;` is the text `&lt;`, not `<`.
    .replace(/&(amp|lt|gt);/g, (_, name: string) => TEXT_OF_ENTITY[name])
    .replace(/\n{3,}/g, '\n\n')
    .trim();
}
