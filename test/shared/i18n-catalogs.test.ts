import { CATALOGS as MAIL_CATALOGS } from '../../services/mail-worker/i18n';
import { CATALOGS as PAGE_CATALOGS } from '../../services/gateway/public/i18n';
import { CATALOGS as RECURRENCE_CATALOGS } from '../../shared/i18n/recurrence';
import { LOCALES } from '../../shared/i18n/translations';

/**
 * Every set of catalogs (the public pages', the emails', a rule's words): one per language, each saying
 * everything English says, with the same placeholders, under keys i18next reads as they
 * are (it takes `.` and `:` in a key for a path and a namespace).
 */
const placeholders = (text: string) => [...text.matchAll(/\{\{(\w+)\}\}/g)].map((m) => m[1]).sort();

describe.each([
  ['public pages', PAGE_CATALOGS as Record<string, Record<string, string>>],
  ['emails', MAIL_CATALOGS as Record<string, Record<string, string>>],
  ['recurrence', RECURRENCE_CATALOGS as Record<string, Record<string, string>>],
])('the %s catalogs', (_name, catalogs) => {
  const english = catalogs.en;

  it('are one per language, under plain keys', () => {
    expect(Object.keys(catalogs).sort()).toEqual([...LOCALES].sort());
    expect(Object.keys(english).filter((key) => !/^\w+$/.test(key))).toEqual([]);
  });

  it.each(LOCALES.filter((l) => l !== 'en'))('%s has every key English has, each with its placeholders', (locale) => {
    const catalog = catalogs[locale];
    expect(Object.keys(english).filter((key) => !(key in catalog))).toEqual([]);
    expect(Object.keys(catalog).filter((key) => !(key in english))).toEqual([]);
    for (const [key, text] of Object.entries(english)) {
      expect([key, typeof catalog[key] === 'string' && catalog[key].trim().length > 0]).toEqual([key, true]);
      expect([key, placeholders(catalog[key])]).toEqual([key, placeholders(text)]);
    }
  });
});
