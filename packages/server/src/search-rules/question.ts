import { words } from './analyzer.ts';

/**
 * Questions asked as questions ("When did Maya go on holiday?", "What kind of dog does Tom
 * have?"): the words that frame the question say nothing about what answers it, yet as query
 * terms they match whatever else uses them ("go", "kind", "happened"). They are dropped from
 * a question's terms at query time only; entries are indexed as ever, so no store changes.
 * English grammar, not any corpus: interrogatives, auxiliaries and modals, light verbs, and
 * the nouns and adverbs questions are framed with.
 */
const INTERROGATIVES = new Set(['who', 'whom', 'whose', 'what', 'when', 'where', 'which', 'why', 'how']);
const AUXILIARIES = new Set(['do', 'does', 'did', 'is', 'are', 'was', 'were', 'has', 'have', 'had', 'can', 'could', 'will', 'would', 'should', 'shall', 'may', 'might', 'must']);
const FRAME_WORDS: ReadonlySet<string> = new Set([
  ...INTERROGATIVES,
  ...AUXILIARIES,
  // light verbs: the question's scaffolding ("did X get", "does X go"), not its subject
  'get', 'gets', 'got', 'getting', 'go', 'goes', 'went', 'going', 'happen', 'happens', 'happened', 'happening',
  // frames: "what kind of", "anything about", "tell me", "recently"
  'kind', 'sort', 'type', 'thing', 'things', 'anything', 'something', 'anyone', 'someone', 'anybody', 'somebody',
  'tell', 'know', 'recently', 'lately', 'ever', 'ago',
]);

/** Whether `text` is phrased as a question: it ends with "?" or opens with an interrogative or an auxiliary. */
export const isQuestion = (text: string): boolean => {
  if (/\?\s*$/.test(text)) return true;
  const first = words(text).next();
  return !first.done && (INTERROGATIVES.has(first.value.word) || AUXILIARIES.has(first.value.word));
};

/** Whether `word` (folded, unstemmed) frames a question rather than names what it asks about. */
export const isFrameWord = (word: string): boolean => FRAME_WORDS.has(word);


/**
 * Words that place something in time: a "when" question is answered by a text that says
 * when ("on Saturday", "last night", "next month"), whatever it is about. English calendar
 * and deictic time words; numeric dates and times are left to the terms typed.
 */
const TIME_WORDS = [
  'monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday', 'sunday', 'weekend', 'weekday',
  'january', 'february', 'march', 'april', 'june', 'july', 'august', 'september', 'october', 'november', 'december',
  'today', 'tonight', 'yesterday', 'tomorrow', 'morning', 'afternoon', 'evening', 'night', 'noon', 'midnight',
  'week', 'month', 'year', 'ago', 'last', 'next', 'soon', 'earlier', 'later', 'recently', 'since',
];
const WHEN = /^\s*(when\b|what (time|date|day|year|month)\b|how long ago\b)/i;

/** Whether `text` asks when something happened or will. */
export const asksWhen = (text: string): boolean => WHEN.test(text);

/** The time words a "when" question is expanded by, each weighed as an expansion term. */
export const timeWords = (): readonly string[] => TIME_WORDS;
