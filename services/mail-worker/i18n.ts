import { type Locale, type Translate, translators } from '../../shared/i18n/translations';
import de from './locales/de.json';
import en from './locales/en.json';
import es from './locales/es.json';
import fr from './locales/fr.json';
import it from './locales/it.json';
import ja from './locales/ja.json';
import nl from './locales/nl.json';
import pt from './locales/pt.json';

/**
 * The texts of the emails to invitees and to people who answered, a catalog per language
 * (../../shared/i18n/translations.ts says how they are read). `colon` is what joins a
 * label to its value ("When: …"; French puts a space before it, Japanese a full-width
 * colon). The account emails (account-mail.ts) stay English, as the dashboard is.
 */
export const CATALOGS = { en, de, fr, es, pt, it, nl, ja } as const;

export type MailTextKey = keyof typeof en;

/** The texts of a language. */
export const mailTexts: (locale: Locale) => Translate<MailTextKey> = translators('mail', CATALOGS);
