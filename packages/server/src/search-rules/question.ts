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

/** A question without its frame words (unless nothing else would be left); other text as it is. */
export const withoutFrame = (text: string): string => {
  if (!isQuestion(text)) return text;
  const kept = [...words(text)].filter((w) => !isFrameWord(w.word)).map((w) => text.slice(w.start, w.end));
  return kept.length > 0 ? kept.join(' ') : text;
};
