import type { Request } from 'express';
import { localRecurrenceText } from '../../../shared/i18n/recurrence';
import { isLocale, type Locale, LOCALES, type Translate as TranslateKeys, translators } from '../../../shared/i18n/translations';
import de from './locales/de.json';
import en from './locales/en.json';
import es from './locales/es.json';
import fr from './locales/fr.json';
import it from './locales/it.json';
import ja from './locales/ja.json';
import nl from './locales/nl.json';
import pt from './locales/pt.json';

export { type Locale, LOCALES };

/** The public pages' texts, a catalog per language (../../../shared/i18n/translations.ts says how they are read). */
export const CATALOGS = { en, de, fr, es, pt, it, nl, ja } as const;

export type MessageKey = keyof typeof en;
export type Translate = TranslateKeys<MessageKey>;

/** The texts of a language. */
export const translator: (locale: Locale) => Translate = translators('page', CATALOGS);

/**
 * The page's language: `?lang=`, else the best of Accept-Language, else the calendar's
 * `locale` (for a browser that names none of ours, or no language at all), else English.
 */
export function pageLocale(req: Request, calendarLocale?: string | null): Locale {
  const asked = req.query.lang;
  if (isLocale(asked)) return asked;
  // A browser that names no language (no header, or only `*`) leaves it to the calendar.
  const named = req.acceptsLanguages().filter((l) => l !== '*');
  const accepted = named.length ? req.acceptsLanguages(...LOCALES) : false;
  if (isLocale(accepted)) return accepted;
  return isLocale(calendarLocale) ? calendarLocale : 'en';
}

/**
 * `lang=…` when the address asked for one of our languages, else empty: for the page's own
 * links and form, so that what follows (the next page, the answer and its emails) keeps the
 * language the visitor chose.
 */
export const langParam = (req: Request): string => langOf(req.query);

/** langParam of a query already read. */
export const langOf = (query: Readonly<Record<string, unknown>>): string => (isLocale(query.lang) ? `lang=${query.lang}` : '');

/** A query (`?…` or empty) with `param` (`name=value`, or empty for none) added. */
export const withParam = (query: string, param: string): string => (param ? `${query}${query ? '&' : '?'}${param}` : query);

/** What the answer depends on beside its address: the platform order and the language. */
export const PAGE_VARY = 'User-Agent, Accept-Language';

/** The words an add-event link adds to the event's own texts, in one language. */
export interface LinkTexts {
  /** "Repeats every week on Tuesday.", for the platforms that take no rule; null when the rule has no words. */
  repeats(rule: string, zone: string): string | null;
  /** The link back to the event page that ends a description cut to fit. */
  more(pageUrl: string): string;
}

const linkTextsByLocale = new Map<Locale, LinkTexts>();

/** The words of add-event links in `locale`. */
export function linkTexts(locale: Locale): LinkTexts {
  let texts = linkTextsByLocale.get(locale);
  if (!texts) {
    const t = translator(locale);
    texts = {
      repeats: (rule, zone) => {
        const words = localRecurrenceText(rule, zone, locale);
        return words ? t('platform_repeats', { rule: words }) : null;
      },
      more: (pageUrl) => t('platform_more', { url: pageUrl }),
    };
    linkTextsByLocale.set(locale, texts);
  }
  return texts;
}
