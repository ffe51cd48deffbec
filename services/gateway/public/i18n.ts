import type { Request } from 'express';
import i18next, { type TFunction } from 'i18next';
import de from './locales/de.json';
import en from './locales/en.json';
import es from './locales/es.json';
import fr from './locales/fr.json';
import it from './locales/it.json';
import ja from './locales/ja.json';
import nl from './locales/nl.json';
import pt from './locales/pt.json';

/**
 * The public pages' languages: their texts come from the catalogs in ./locales (English is
 * the reference: every catalog has its keys, which a test checks), their dates from Intl.
 */
export const CATALOGS = { en, de, fr, es, pt, it, nl, ja } as const;
export type Locale = keyof typeof CATALOGS;
export const LOCALES = Object.keys(CATALOGS) as Locale[];

export type MessageKey = keyof typeof en;
export type Translate = (key: MessageKey, values?: Record<string, string | number>) => string;

const i18n = i18next.createInstance();
void i18n.init({
  resources: Object.fromEntries(LOCALES.map((l) => [l, { page: CATALOGS[l] }])),
  defaultNS: 'page',
  lng: 'en',
  fallbackLng: 'en',
  supportedLngs: LOCALES,
  // Synchronous: the catalogs are here. Values are escaped by the pages' templates, not here.
  initAsync: false,
  interpolation: { escapeValue: false },
  returnNull: false,
});

/**
 * Each language's texts, resolved by i18next once (with its fallback to English) and kept
 * as plain templates: a page asks for dozens of texts, and i18next's own lookup costs
 * microseconds each. Placeholders (`{{name}}`) are filled in here.
 */
const translators = new Map<Locale, Translate>(
  LOCALES.map((locale) => {
    const t: TFunction = i18n.getFixedT(locale);
    // Asked for with no values, so that the templates keep their placeholders.
    const templates = new Map((Object.keys(en) as MessageKey[]).map((key) => [key, String(t(key, { interpolation: { skipOnVariables: true }, skipInterpolation: true }))]));
    const translate: Translate = (key, values) => {
      const template = templates.get(key) ?? key;
      return values ? template.replace(PLACEHOLDER, (whole, name: string) => (name in values ? String(values[name]) : whole)) : template;
    };
    return [locale, translate];
  }),
);
const PLACEHOLDER = /\{\{(\w+)\}\}/g;

/** The texts of a language. */
export const translator = (locale: Locale): Translate => translators.get(locale) as Translate;

const isLocale = (value: unknown): value is Locale => typeof value === 'string' && (LOCALES as string[]).includes(value);

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

/** What the answer depends on beside its address: the platform order and the language. */
export const PAGE_VARY = 'User-Agent, Accept-Language';
