/**
 * Which language a text is written in, as far as the rules need to know: they read English
 * only, and a German, French or Spanish text read as English gives a wrong date (chrono
 * takes "10.03." or "lundi" apart) or none. Told cheaply by the small words every sentence
 * has: one pass over the words, a lookup each (words in capitals, "ET", "LA", are
 * abbreviations and skipped). Words that are also particles of names
 * ("de", "la", "van", "del") weigh half, so an English text about "Café de la Paix" stays
 * English; a text is foreign when its foreign words weigh at least 2 and more than twice
 * its English ones.
 */
type Language = 'en' | 'de' | 'fr' | 'es';

/** Only this much of a text is looked at: the language shows in its first sentences. */
const SAMPLE_CHARS = 2000;

const words = (list: string) => list.split(' ');

const ENGLISH = new Set(
  words(
    'the and of to is for on at with we you our will be this please are your from by it that have has join us tomorrow today next every my me there here can would could about after before until see let let\'s i\'m we\'re you\'re don\'t',
  ),
);

// Words ambiguous with English ("in", "an", "am", "die", "was", "will", "also", "so") or with
// each other ("en": French and Spanish) are left out.
const FOREIGN: Record<Exclude<Language, 'en'>, Set<string>> = {
  de: new Set(
    words(
      'der das und ist nicht mit den dem des ein eine einen einem einer um uhr im zum zur bitte wir sie ich auf für bei von vom sind wird werden ab bis nach morgen heute übermorgen nächsten nächste nächster treffen uns euch gibt es zu auch oder aber wie wo wann findet statt herzlich einladung liebe hallo grüße gruß montag dienstag mittwoch donnerstag freitag samstag sonntag januar februar märz mai juni juli oktober dezember besprechung termin',
    ),
  ),
  fr: new Set(
    words(
      'est et une pour avec dans au aux nous vous ce cette sur par sont sera à chez demain aujourd\'hui prochain prochaine réunion rendez-vous merci bonjour salut lundi mardi mercredi jeudi vendredi samedi dimanche janvier février mars avril juin juillet août septembre octobre novembre décembre heures midi soir matin notre votre rejoindre',
    ),
  ),
  es: new Set(
    words(
      'es que con para por una nos se está están será hoy mañana próximo próxima reunión lunes martes miércoles jueves viernes sábado domingo enero febrero marzo abril mayo junio julio agosto septiembre octubre noviembre diciembre hola gracias favor nuestra nuestro vamos al tarde noche cita',
    ),
  ),
};

// Particles of names in English texts ("Rue de la Paix", "Les Deux Magots", "Los Angeles").
const NAME_PARTICLES = new Set(words('de la le les du des del di da van von der y el los las'));
const NAME_PARTICLE_LANGUAGES: Record<string, Array<Exclude<Language, 'en'>>> = {
  de: ['fr', 'es'],
  la: ['fr', 'es'],
  le: ['fr'],
  les: ['fr'],
  du: ['fr'],
  des: ['fr'],
  del: ['es'],
  y: ['es'],
  el: ['es'],
  los: ['es'],
  las: ['es'],
  von: ['de'],
  der: ['de'],
};

const WORD = /[\p{L}][\p{L}'-]*/gu;

export function detectLanguage(text: string): Language {
  const score = { en: 0, de: 0, fr: 0, es: 0 };
  for (const m of text.slice(0, SAMPLE_CHARS).matchAll(WORD)) {
    // "ET", "LA", "DE": abbreviations in capitals are no words of a language.
    if (m[0].length > 1 && m[0] === m[0].toUpperCase()) continue;
    const w = m[0].toLowerCase();
    if (ENGLISH.has(w)) score.en += 1;
    if (NAME_PARTICLES.has(w)) {
      for (const lang of NAME_PARTICLE_LANGUAGES[w] ?? []) score[lang] += 0.5;
      continue;
    }
    for (const lang of ['de', 'fr', 'es'] as const) if (FOREIGN[lang].has(w)) score[lang] += 1;
  }
  const [best, weight] = (['de', 'fr', 'es'] as const).map((l) => [l, score[l]] as const).sort((a, b) => b[1] - a[1])[0];
  return weight >= 2 && weight > 2 * score.en ? best : 'en';
}
