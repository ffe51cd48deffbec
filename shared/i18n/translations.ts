import i18next, { type TFunction } from 'i18next';

/**
 * The languages people read us in: the public pages and the emails to invitees each have
 * a catalog per language (English is the reference: every catalog has its keys, which a
 * test checks). Dates are written by Intl for the language (see dates.ts).
 */
export const LOCALES = ['en', 'de', 'fr', 'es', 'pt', 'it', 'nl', 'ja'] as const;
export type Locale = (typeof LOCALES)[number];

export const isLocale = (value: unknown): value is Locale => typeof value === 'string' && (LOCALES as readonly string[]).includes(value);

/** A catalog's text by key, its placeholders (`{{name}}`) filled from `values`. */
export type Translate<K extends string> = (key: K, values?: Record<string, string | number>) => string;

const PLACEHOLDER = /\{\{(\w+)\}\}/g;

/**
 * The translators of one set of catalogs (one per language). Each language's texts are
 * resolved by i18next once, with its fallback to English, and kept as plain templates:
 * a page or message asks for dozens of texts, and i18next's own lookup costs microseconds
 * each. Values are escaped by the templates that use the texts, not here.
 */
export function translators<C extends Record<string, string>>(namespace: string, catalogs: Record<Locale, C>): (locale: Locale) => Translate<keyof C & string> {
  const i18n = i18next.createInstance();
  void i18n.init({
    resources: Object.fromEntries(LOCALES.map((l) => [l, { [namespace]: catalogs[l] }])),
    defaultNS: namespace,
    lng: 'en',
    fallbackLng: 'en',
    supportedLngs: [...LOCALES],
    // Synchronous: the catalogs are here.
    initAsync: false,
    interpolation: { escapeValue: false },
    returnNull: false,
  });
  const keys = Object.keys(catalogs.en) as Array<keyof C & string>;
  const byLocale = new Map<Locale, Translate<keyof C & string>>(
    LOCALES.map((locale) => {
      const t: TFunction = i18n.getFixedT(locale);
      // Asked for with no values, so that the templates keep their placeholders.
      const options = { interpolation: { skipOnVariables: true }, skipInterpolation: true };
      const templates = new Map(keys.map((key) => [key, String(t(key as string, options))]));
      const translate: Translate<keyof C & string> = (key, values) => {
        const template = templates.get(key) ?? key;
        return values ? template.replace(PLACEHOLDER, (whole, name: string) => (name in values ? String(values[name]) : whole)) : template;
      };
      return [locale, translate];
    }),
  );
  return (locale) => byLocale.get(locale) ?? (byLocale.get('en') as Translate<keyof C & string>);
}
