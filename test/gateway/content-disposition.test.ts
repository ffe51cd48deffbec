import { parse } from 'content-disposition';
import { contentDisposition, titleFileNames } from '../../services/gateway/http/content-disposition';

/** The header as a reader that knows RFC 6266 sees it (the content-disposition package), and as one that reads only `filename`. */
function read(header: string): { type: string; name: string; fallback: string } {
  const decoded = parse(header);
  const raw = parse(header, { extended: false });
  return { type: decoded.type, name: decoded.parameters.filename, fallback: raw.parameters.filename };
}

describe('Content-Disposition of files named after a title', () => {
  it('keeps a title in Latin letters as one ASCII name', () => {
    expect(titleFileNames('Quarterly Review: Q3 / 2026', 'ics')).toEqual({ ascii: 'quarterly-review-q3-2026.ics' });
    expect(contentDisposition('attachment', titleFileNames('Quarterly Review: Q3 / 2026', 'ics'))).toBe('attachment; filename="quarterly-review-q3-2026.ics"');
    expect(titleFileNames('2027', 'ics')).toEqual({ ascii: '2027.ics' });
    expect(titleFileNames('<<<>>>', 'ics')).toEqual({ ascii: 'event.ics' });
  });

  it.each([
    ['Japanese', '会議 2027', '会議-2027.ics', 'event-2027.ics', "filename*=UTF-8''%E4%BC%9A%E8%AD%B0-2027.ics"],
    ['Arabic', 'اجتماع الفريق', 'اجتماع-الفريق.ics', 'event.ics', "filename*=UTF-8''%D8%A7%D8%AC%D8%AA%D9%85%D8%A7%D8%B9-%D8%A7%D9%84%D9%81%D8%B1%D9%8A%D9%82.ics"],
    ['Hindi (combining vowel signs)', 'नमस्ते दुनिया', 'नमस्ते-दुनिया.ics', 'event.ics', null],
    ['French', 'Café crème', 'café-crème.ics', 'cafe-creme.ics', "filename*=UTF-8''caf%C3%A9-cr%C3%A8me.ics"],
  ])('%s: the name in UTF-8 as filename*, an ASCII fallback as filename', (_script, title, name, fallback, encoded) => {
    const header = contentDisposition('attachment', titleFileNames(title, 'ics'));
    expect(header).toMatch(/^attachment; filename="[\x20-\x7e]+"; filename\*=UTF-8''[A-Za-z0-9%!#$&+\-.^_`|~]+$/);
    if (encoded) expect(header).toContain(encoded);
    expect(read(header)).toEqual({ type: 'attachment', name, fallback });
  });

  it('cuts a long title between characters, never inside a surrogate pair', () => {
    // 𠀋 (U+2000B) is a letter outside the BMP: two UTF-16 units.
    const names = titleFileNames(`🎉 ${'𠀋'.repeat(45)} ${'日本'.repeat(40)}`, 'ics');
    expect(Array.from((names.unicode as string).replace(/\.ics$/, ''))).toHaveLength(60);
    expect(names.unicode).not.toMatch(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])/);
    expect(read(contentDisposition('inline', names)).name).toBe(names.unicode);
  });

  it('writes an inline feed and a plain ASCII download the same way', () => {
    expect(read(contentDisposition('inline', titleFileNames('Événements de l’équipe', 'ics')))).toEqual({
      type: 'inline',
      name: 'événements-de-l-équipe.ics',
      fallback: 'evenements-de-l-equipe.ics',
    });
    expect(contentDisposition('attachment', { ascii: 'rsvps-evt_AbC123.csv' })).toBe('attachment; filename="rsvps-evt_AbC123.csv"');
  });
});
