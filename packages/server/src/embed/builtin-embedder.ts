import { codeFile, workerScript } from '../package-files.ts';
import type { Embedder } from '../ports/embedder.ts';
import { STOP_WORDS, type Word, joinedNames, termOf, words } from '../search-rules/analyzer.ts';
import { ACRONYM_WEIGHT, Acronyms } from './acronyms.ts';
import { EmbedThread } from './embed-thread.ts';
import { type WordUnit, WordVectors } from './word-vectors.ts';
import { WordSimilarities } from './word-similarities.ts';

const WORKER = workerScript('embed/builtin-worker');
const TABLE = codeFile('embed/data/glove-100d.bin');
const LEXICON = { graph: codeFile('embed/data/wordnet-graph.bin'), vectors: codeFile('embed/data/glove-100d-wordnet.bin') };
const ACRONYMS = codeFile('embed/data/acronyms.tsv');

/** Query expansion (relatedWords), tuned on the operations set of test/eval. */
const RELATED_PER_WORD = 3;
const RELATED_MIN_COSINE = 0.6;
const RELATED_WEIGHT = 0.8;

/** Milliseconds of background embedding within one second after which batches move to their own thread. */
const THREAD_AFTER_MS = 50;
/** A thread given no batch for this long is stopped, and batches run here again until the load returns. */
const THREAD_IDLE_MS = 60_000;

/** Characters of text whose words are kept as unit vectors (see wordsOf): a few megabytes. */
const MAX_CACHED_CHARS = 4_000_000;

type Unit = WordUnit;

/** A text as the word-by-word ranking reads it: its distinct content words as unit vectors, and its names written in parts, joined (analyzer.ts joinedNames). */
interface TextWords {
  units: readonly Unit[];
  names: readonly string[];
}

/**
 * The query words by their stem (analyzer.ts termOf), by position: all of them, and those the
 * word table lacks. A text word of a query word's stem is that word inflected ("uuids" and
 * "uuid"), which the text ranking finds as one term; where the table lacks either of the two,
 * their directions are unrelated hashes, and the stem is all there is to go on. Where it holds
 * both, their vectors say how alike they are (stems also join words that differ: "general"
 * and "generate").
 */
const stemsOf = (q: readonly Unit[]): { all: Map<string, number[]>; unknown: Map<string, number[]> } => {
  const all = new Map<string, number[]>();
  const unknown = new Map<string, number[]>();
  q.forEach((unit, i) => {
    const stem = termOf(unit.word);
    all.set(stem, [...(all.get(stem) ?? []), i]);
    if (!unit.known) unknown.set(stem, [...(unknown.get(stem) ?? []), i]);
  });
  return { all, unknown };
};

/** The query positions a text word matches by its stem, where the table lacks one of the two. */
const sameStem = (stems: ReturnType<typeof stemsOf>, unit: Unit): readonly number[] | undefined => {
  const matching = unit.known ? stems.unknown : stems.all;
  // Most queries hold only words the table knows: then known text words need no stem.
  if (matching.size === 0) return undefined;
  unit.stem ??= termOf(unit.word);
  return matching.get(unit.stem);
};

/** The query positions a text word matches exactly: as a name the query spells in parts, or by its stem. */
const sameWord = (asName: readonly number[] | undefined, byStem: readonly number[] | undefined): readonly number[] | undefined =>
  asName && byStem ? [...asName, ...byStem] : (asName ?? byStem);

/** Content words of a text (no stop words, no absurdly long tokens), in order; `textWords`: its words, when read already. */
function* contentWords(text: string, textWords: Iterable<Word> = words(text)): Generator<string> {
  for (const { word } of textWords) if (!STOP_WORDS.has(word) && word.length <= 40) yield word;
}

/**
 * The default embedder: no network, no model download, deterministic. A text's vector is the
 * SIF-weighted average of GloVe word vectors (100 dimensions, the 100k most frequent words,
 * distilled by scripts/distill-embeddings.ts), so "outage" lands near "downtime" and
 * "lapsed" near "expired". With its lexicon (the default), the words WordNet relates have
 * vectors retrofitted to those relations and serve query expansion (scripts/distill-wordnet.ts:
 * "grandma" by "grandmother", "physician" by "doctor"). Words outside the table get a stable hashed direction, which
 * makes a shared rare name (a service, a ticket number) count too. It captures words, not
 * word order or negation: a sentence model served by an OpenAI-compatible endpoint ranks
 * paraphrases better (see README: Search).
 */
export class BuiltinEmbedder implements Embedder {
  readonly id: string;
  readonly dimension = 100;
  readonly local = true;
  private readonly words: WordVectors;
  private readonly textWords = new Map<string, TextWords>();
  private cachedChars = 0;
  private readonly related = new Map<string, readonly { word: string; cos: number }[]>();
  /** The lexicon's acronyms, read on first use; null without the lexicon. */
  private acronyms: Acronyms | null | undefined;
  /** Counts wordMatch calls: a word whose `pass` is the current one has its similarities in this call's table, at row `slot`. */
  private pass = 0;
  private readonly similarities = new WordSimilarities(this.dimension);
  /** The similarity rows of one text's words, handed to the table for their best matches. */
  private rowsOfText = new Int32Array(256);
  /** Background batches' thread; null once it could not be used (they then run here). */
  private thread: EmbedThread | null;
  /** Whether background batches go to the thread (see embedInBackground). */
  private threaded = false;
  private busySince = 0;
  private busyMs = 0;
  private readonly threadIdleMs: number;
  private idleTimer: NodeJS.Timeout | null = null;
  private closed = false;

  /**
   * `lexicon`: retrofit the vectors to WordNet (the default); false gives the embedder as it was
   * before. `threadIdleMs`: how long the background thread may sit idle before it is stopped.
   */
  constructor(options: { lexicon?: boolean; threadIdleMs?: number } = {}) {
    const lexicon = options.lexicon ?? true;
    this.threadIdleMs = options.threadIdleMs ?? THREAD_IDLE_MS;
    this.id = lexicon ? 'builtin:glove-100d-wordnet-sif-v2' : 'builtin:glove-100d-sif-v1';
    this.words = new WordVectors(TABLE, this.dimension, lexicon ? LEXICON : null);
    if (!lexicon) this.acronyms = null;
    this.thread = new EmbedThread(WORKER, { lexicon }, ({ digest }) => {
      if (digest !== this.id) throw new Error(`the embedding thread runs ${digest}, not ${this.id}`);
    });
  }

  /** Read the word table, the lexicon and its acronyms now rather than in the first write or search. */
  warm(): void {
    this.warmVectors();
    this.acronymTable();
  }

  /** Only what vectors need (the embedding thread never expands a query). */
  warmVectors(): void {
    this.words.warm();
  }

  /** In this thread: a query's vector costs microseconds, less than a message to another thread. */
  async embed(texts: readonly string[]): Promise<Float32Array[]> {
    return texts.map((t) => this.embedOne(t));
  }

  /**
   * Batches off the request path (the index's queue, PostgreSQL's indexer, a search as of a
   * past instant). They run here until embedding has taken more than THREAD_AFTER_MS of one
   * second of this thread's time, then in a thread of their own from then on: under a write
   * load, words-to-vectors work (6 % of a filesystem write's CPU with the bench's 1 KiB value,
   * more with longer text) then runs beside the requests instead of between them. Below that
   * load the thread's memory (its own copy of the word table and a JavaScript heap: about
   * 80 MiB resident) buys nothing, so a thread left idle for THREAD_IDLE_MS (after a first
   * start's backlog, an import) is stopped and batches come back here. The same code makes the
   * same vectors there. Should the thread fail, batches run here again.
   */
  async embedInBackground(texts: readonly string[]): Promise<Float32Array[]> {
    if (this.closed) throw new Error('the embedder is closed');
    if (this.thread && this.threaded) {
      try {
        const vectors = await this.thread.embed(texts);
        this.stopWhenIdle();
        return vectors;
      } catch {
        if (this.closed) throw new Error('the embedder is closed');
        this.thread = null;
      }
    }
    const started = performance.now();
    const vectors = texts.map((t) => this.embedOne(t));
    this.noteBusy(started, performance.now());
    return vectors;
  }

  /** Count embedding time in the current second; past THREAD_AFTER_MS, batches move to the thread. */
  private noteBusy(started: number, ended: number): void {
    if (ended - this.busySince > 1000) {
      this.busySince = started;
      this.busyMs = 0;
    }
    this.busyMs += ended - started;
    if (this.busyMs > THREAD_AFTER_MS) this.threaded = true;
  }

  /** (Re)start the idle countdown after a batch in the thread. */
  private stopWhenIdle(): void {
    if (this.idleTimer) {
      this.idleTimer.refresh();
      return;
    }
    this.idleTimer = setTimeout(() => {
      this.idleTimer = null;
      this.threaded = false;
      this.busyMs = 0;
      void this.thread?.stop();
    }, this.threadIdleMs).unref();
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.idleTimer) clearTimeout(this.idleTimer);
    await this.thread?.close();
  }

  /** Synchronous form for in-process indexing. */
  embedOne(text: string): Float32Array {
    const out = new Float32Array(this.dimension);
    for (const word of contentWords(text)) this.words.addTo(out, word);
    let norm = 0;
    for (let d = 0; d < out.length; d++) norm += (out[d] as number) ** 2;
    if (norm > 0) for (let d = 0; d < out.length; d++) out[d]! /= Math.sqrt(norm);
    return out;
  }

  /**
   * Word-by-word similarity of `query` to each text: for every query word, its cosine with
   * the closest word of the text, averaged with the word weights. Unlike the averaged vector
   * it keeps each word's match, so "lapsed" still finds "expired" in a long text.
   */
  async wordMatch(query: string, texts: readonly string[]): Promise<number[]> {
    const q = this.wordsOf(query).units;
    const total = q.reduce((sum, w) => sum + w.weight, 0);
    if (total === 0) return texts.map(() => 0);
    const n = q.length;
    // Candidates share most of their words: each distinct word's similarities to the query
    // words are computed once per call, into its row of one table. The word carries its row,
    // stamped with this call's pass, so finding it costs no lookup.
    const pass = ++this.pass;
    const table = this.similarities;
    table.begin(q.map((w) => w.vector));
    const acronyms = this.acronymsOf(query);
    const { exact, spelled } = this.namesOf(query, q);
    const stems = stemsOf(q);
    return texts.map((text) => {
      const { units, names: textNames } = this.wordsOf(text);
      if (units.length > this.rowsOfText.length) this.rowsOfText = new Int32Array(Math.max(units.length, 2 * this.rowsOfText.length));
      const rows = this.rowsOfText;
      let spelledHere: readonly number[] | undefined;
      units.forEach((unit, u) => {
        if (unit.pass !== pass) {
          unit.pass = pass;
          unit.slot = table.add(unit);
          unit.spells = sameWord(spelled.size > 0 ? spelled.get(unit.word) : undefined, sameStem(stems, unit));
        }
        rows[u] = unit.slot;
        if (unit.spells) spelledHere = spelledHere ? [...spelledHere, ...unit.spells] : unit.spells;
      });
      const best = table.best(rows, units.length);
      for (const { acronym, said } of acronyms) {
        if (!units.some((unit) => unit.word === acronym)) continue;
        for (const i of said) if ((best[i] as number) < ACRONYM_WEIGHT) best[i] = ACRONYM_WEIGHT;
      }
      // A name matches its words exactly, written either way: a text's PgBouncer the query's
      // pgbouncer, a query's PgBouncer (its words pg, bouncer) a text's pgbouncer. Names the
      // word table does not know have vectors of no meaning, which match nothing else.
      for (let k = 0; k < textNames.length; k++) {
        const said = exact.get(textNames[k] as string);
        if (said) for (const i of said) best[i] = 1;
      }
      if (spelledHere) for (const i of spelledHere) best[i] = 1;
      let sum = 0;
      for (let i = 0; i < n; i++) sum += (q[i] as Unit).weight * (best[i] as number);
      return sum / total;
    });
  }

  /**
   * Query expansion from the lexicon: for each query word, the related words closest to it
   * in the retrofitted space (at most RELATED_PER_WORD, cosine at least RELATED_MIN_COSINE),
   * weighted by that cosine times RELATED_WEIGHT; and the acronyms the query spells out or
   * writes (acronyms.ts).
   */
  /** Whether the word table (the 100k commonest GloVe words) holds `word`. */
  knowsWord(word: string): boolean {
    return this.words.knows(word);
  }

  relatedWords(query: string): { word: string; weight: number }[] {
    const own = new Set(contentWords(query));
    const out: { word: string; weight: number }[] = this.acronymTable()?.related(query) ?? [];
    for (const word of own) {
      let taken = 0;
      for (const n of this.nearestRelated(word)) {
        if (own.has(n.word)) continue;
        out.push({ word: n.word, weight: n.cos * RELATED_WEIGHT });
        if (++taken === RELATED_PER_WORD) break;
      }
    }
    return out;
  }

  /**
   * The acronyms `query` spells out, each with the positions of the query
   * words that said it: a text that writes the acronym matches those words at ACRONYM_WEIGHT,
   * as query expansion counts it (acronyms.ts).
   */
  private acronymsOf(query: string): { acronym: string; said: number[] }[] {
    const spelled = this.acronymTable()?.spelledOut(query) ?? [];
    if (spelled.length === 0) return [];
    const queryWords = [...new Set(contentWords(query))];
    return spelled.map(({ acronym, words: said }) => ({ acronym, said: said.map((w) => queryWords.indexOf(w)).filter((i) => i >= 0) }));
  }

  private acronymTable(): Acronyms | null {
    if (this.acronyms === undefined) this.acronyms = Acronyms.load(ACRONYMS);
    return this.acronyms;
  }

  /**
   * The related words of `word` at RELATED_MIN_COSINE or closer, closest first. The lexicon
   * never changes, so each word's list is computed once (the same words come back query
   * after query); the query's own words are left out by the caller.
   */
  private nearestRelated(word: string): readonly { word: string; cos: number }[] {
    let near = this.related.get(word);
    if (near) return near;
    near = this.words
      .related(word)
      .filter((n) => n.cos >= RELATED_MIN_COSINE && !STOP_WORDS.has(n.word))
      .sort((a, b) => b.cos - a.cos);
    if (this.related.size >= 50_000) this.related.clear();
    this.related.set(word, near);
    return near;
  }

  /**
   * The query words a name matches exactly (see wordMatch), by the positions of those words
   * among `q`. `spelled`: the names the query writes in parts, each with its words' positions
   * (its words read again where it stands), which a text may write as one word. `exact`: those, and each query word by itself, which a text's
   * name joined may be.
   */
  private namesOf(query: string, q: readonly Unit[]): { exact: Map<string, number[]>; spelled: Map<string, number[]> } {
    const exact = new Map(q.map((unit, i) => [unit.word, [i]]));
    const spelled = new Map<string, number[]>();
    for (const { name, start, end } of joinedNames(query)) {
      const said = [...words(query.slice(start, end))].flatMap((part) => exact.get(part.word) ?? []);
      if (said.length > 0) spelled.set(name, said);
    }
    for (const [name, said] of spelled) exact.set(name, said);
    return { exact, spelled };
  }

  /**
   * The distinct content words of `text` as unit vectors, and its names joined. Kept per
   * text: a hybrid search re-reads dozens of candidates, mostly the same ones from search to
   * search, and tokenizing them again was most of its cost.
   */
  private wordsOf(text: string): TextWords {
    let known = this.textWords.get(text);
    if (known) return known;
    const read = [...words(text)];
    known = { units: [...new Set(contentWords(text, read))].map((w) => this.words.unit(w)), names: [...joinedNames(text, read)].map((n) => n.name) };
    if (this.cachedChars + text.length > MAX_CACHED_CHARS) {
      this.textWords.clear();
      this.cachedChars = 0;
    }
    this.textWords.set(text, known);
    this.cachedChars += text.length;
    return known;
  }
}
