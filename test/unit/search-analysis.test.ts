import { describe, expect, it } from 'vitest';
import { ConfigError, parseConfig } from '../../packages/server/src/config.ts';
import type { Entry } from '../../packages/server/src/domain/entry.ts';
import { BuiltinEmbedder } from '../../packages/server/src/embed/builtin-embedder.ts';
import { analyze, termOf, words } from '../../packages/server/src/search-rules/analyzer.ts';
import { FIELD_LETTER, FIELD_WEIGHTS, type FieldClass, docTerms } from '../../packages/server/src/search-rules/entry-text.ts';
import { SCALE_DEPTH, fuse } from '../../packages/server/src/search-rules/fuse.ts';
import { K1, idf, queryCeiling } from '../../packages/server/src/search-rules/bm25.ts';
import { decodeGraph, encodeGraph } from '../../packages/server/src/embed/word-graph.ts';
import { WordSimilarities, cosines } from '../../packages/server/src/embed/word-similarities.ts';
import { cosineKernels } from '../../packages/server/src/embed/cosine-kernel.ts';
import { wasmMemory } from '../../packages/server/src/wasm/module-bytes.ts';
import { containsPhrase, expandQuery, parseQuery } from '../../packages/server/src/search-rules/query.ts';
import { highlight } from '../../packages/server/src/search-rules/highlights.ts';
import { withoutFrame } from '../../packages/server/src/search-rules/question.ts';
import { random } from '../../packages/server/src/search/seeded-random.ts';
import { tfReader, tsqueryOf, tsvectorOf } from '../../packages/server/src/store/postgres/search-terms.ts';

const entry = (over: Partial<Entry> = {}): Entry => ({
  namespace: 'default', entity_path: 'repos/acme/checkout-api', key: 'pr-42', value: { title: 'Fix retry storms in OOMKilled pods', n: 7 },
  version: 1, confidence: 1, agent_id: 'a', event_type: null, memory_type: 'fact', shared: false, tags: ['ci'], provenance: {},
  content_hash: 'sha256:x', created_at: '2026-11-01T00:00:00.000Z', written_at: '2026-11-01T00:00:00.000Z', expires_at: null, deleted: false, evidence: { successes: 0, failures: 0, status: 'untested' }, links: [], ...over,
});

/**
 * Every lexeme's weighted frequency, parsed the plain way (a regular expression, positions
 * split on commas): the reference the tsvector reader is held to. A position without a weight
 * letter (D) counts as the value's.
 */
const weightedTf = (tsvector: string): Map<string, number> => {
  const weight: Record<string, number> = Object.fromEntries(Object.entries(FIELD_LETTER).map(([cls, letter]) => [letter, FIELD_WEIGHTS[cls as FieldClass]]));
  const tf = new Map<string, number>();
  for (const [, lexeme, positions] of tsvector.matchAll(/'([^']*)':([0-9A-D,]+)/g)) {
    tf.set(lexeme as string, (positions as string).split(',').reduce((sum, p) => sum + (weight[p.at(-1) as string] ?? FIELD_WEIGHTS.value), 0));
  }
  return tf;
};

describe('search analysis', () => {
  it('folds, splits camelCase, drops stop words (keeping their positions) and stems', () => {
    expect(analyze('The Deployments of OOMKilled pods, Café').map((t) => [t.term, t.pos])).toEqual([['deploy', 1], ['oom', 3], ['kill', 4], ['oomkil', 4], ['pod', 5], ['cafe', 6]]);
  });

  it('finds a name written as several words (camelCase, kebab-case, snake_case) typed as one, and the other way round', () => {
    const terms = (text: string) => analyze(text).map((t) => `${t.term}@${t.pos}${t.overlap ? '+' : ''}`);
    // Each word as ever, and the name joined beside its last word (not a word of its own).
    expect(terms('PgBouncer in front')).toEqual(['pg@0', 'bouncer@1', 'pgbouncer@1+', 'front@3']);
    expect(terms('max_connections raised')).toEqual(['max@0', 'connect@1', 'maxconnect@1+', 'rais@2']);
    expect(terms('a roll-back of getUserById')).toEqual(['roll@1', 'back@2', 'rollback@2+', 'get@4', 'user@5', 'id@7', 'getuserbyid@7+']);
    expect(terms('sha-256 and utf-8')).toEqual(['sha@0', '256@1', 'sha256@1+', 'utf@3', '8@4', 'utf8@4+']);
    // Numbers joined by hyphens (dates, ranges) are no names; other joiners make none.
    expect(terms('on 2026-11-20, 5-10 of v1.2 at db/main')).toEqual(['2026@1', '11@2', 'novemb@2+', '20@3', '5@4', '10@5', 'v1@7', '2@8', 'db@10', 'main@11']);
    // The query side is the same analysis: typed whole, typed in parts, either finds the other.
    expect(parseQuery('pgbouncer').terms).toEqual(['pgbouncer']);
    expect(parseQuery('PgBouncer').terms).toEqual(['pg', 'bouncer', 'pgbouncer']);
    expect(parseQuery('postgresql').terms.every((t) => docTerms(entry({ value: 'runs on PostgreSQL 15' })).tf.has(t))).toBe(true);
    expect(parseQuery('roll-back').terms).toContain('rollback');
    // The joined term adds nothing to a text's length, and a phrase of the words still matches.
    expect(docTerms(entry({ value: 'PgBouncer in front' })).length).toBe(docTerms(entry({ value: 'Pg Bouncer in front' })).length);
    expect(containsPhrase(analyze('added PgBouncer in front'), parseQuery('"pg bouncer"').phrases[0]!)).toBe(true);
    // One span in a highlight, the whole name, whichever of its terms the query named.
    expect(highlight(entry({ value: 'added PgBouncer' }), (term) => ['pg', 'bouncer', 'pgbouncer'].includes(term))).toEqual([{ field: 'value', fragment: 'added PgBouncer', matches: [[6, 15]] }]);
    expect(highlight(entry({ value: 'added PgBouncer' }), (term) => term === 'bouncer')).toEqual([{ field: 'value', fragment: 'added PgBouncer', matches: [[8, 15]] }]);
  });

  it('reads Chinese, Japanese and Korean as overlapping pairs of characters, among the words around them', () => {
    const terms = (text: string) => analyze(text).map((t) => `${t.term}@${t.pos}[${text.slice(t.start, t.end)}]`);
    expect(terms('数据库连接失败')).toEqual(['数据@0[数据]', '据库@1[据库]', '库连@2[库连]', '连接@3[连接]', '接失@4[接失]', '失败@5[失败]']);
    // Words of other scripts around a run are read as ever, and no name joins across it.
    expect(terms('PgBouncer连接池 3个')).toEqual(['pg@0[Pg]', 'bouncer@1[Bouncer]', 'pgbouncer@1[PgBouncer]', '连接@2[连接]', '接池@3[接池]', '3@4[3]', '个@5[个]']);
    // A lone character is its own term; Korean particles no longer hide their word.
    expect(terms('猫 ok')).toEqual(['猫@0[猫]', 'ok@1[ok]']);
    expect(parseQuery('연결').terms.every((t) => docTerms(entry({ value: '연결이 실패했습니다' })).tf.has(t))).toBe(true);
    // A word inside a run is found by its pairs, as terms and as a phrase.
    const inside = parseQuery('数据库');
    expect(inside.terms).toEqual(['数据', '据库']);
    expect(inside.terms.every((t) => docTerms(entry({ value: '昨天数据库连接失败了' })).tf.has(t))).toBe(true);
    expect(containsPhrase(analyze('昨天数据库连接失败了'), parseQuery('"数据库"').phrases[0]!)).toBe(true);
    expect(containsPhrase(analyze('数据和库'), parseQuery('"数据库"').phrases[0]!)).toBe(false);
    // Full-width and half-width forms fold alike (ﾃｰﾌﾞﾙ, テーブル).
    expect(parseQuery('ﾃｰﾌﾞﾙ').terms).toEqual(parseQuery('テーブル').terms);
    // Pairs matched one after the other light one span.
    expect(highlight(entry({ value: '昨天数据库连接失败了' }), (term) => inside.terms.includes(term))).toEqual([{ field: 'value', fragment: '昨天数据库连接失败了', matches: [[2, 5]] }]);
  });

  it('finds the same words in ASCII text by its scanner as by the Unicode pattern', () => {
    // A non-ASCII word at the end sends a text down the Unicode path; the words before it must not change.
    const unicode = (text: string) => [...words(`${text} \u00e9`)].slice(0, -1);
    const alphabet = ['a', 'b', 'z', 'A', 'K', 'Z', '0', '9', ' ', '-', '_', '.', '/', ':', '\n', '@', '`', '[', '{', '~', '\u007f', 'x', 'Q'];
    let seed = 12345;
    const next = () => (seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) / 2 ** 32;
    const samples = ['OOMKilled HTTPServer getUserID xmlHTTPRequest', 'ABC Abc aBc abcD ABCd A1b2C3', '', '   ', 'end.', 'k8s v1.2.3 #42'];
    for (let i = 0; i < 3000; i++) samples.push(Array.from({ length: Math.floor(next() * 40) }, () => alphabet[Math.floor(next() * alphabet.length)]).join(''));
    for (const text of samples) expect([...words(text)], text).toEqual(unicode(text));
    expect([...words('getHTTPResponse OK')].map((w) => [w.word, w.start, w.end])).toEqual([['get', 0, 3], ['http', 3, 7], ['response', 7, 15], ['ok', 16, 18]]);
  });

  it('parses quotes that hold no word (a lone or unclosed quote, stop words, punctuation) as no phrase', () => {
    for (const query of ['"', '""', '" "', '"*"', '"the"', '"!!!"', 'retry "', '"the" retry', 'deploy "-"']) {
      expect(parseQuery(query).phrases, query).toEqual([]);
    }
    expect(parseQuery('retry "').terms).toEqual(['retri']);
  });

  it('parses words, phrases and prefixes', () => {
    const q = parseQuery('retry "connection pool" deploy*');
    expect(q.terms).toEqual(['retri', 'connect', 'pool']);
    expect(q.phrases).toEqual([[{ term: 'connect', offset: 0 }, { term: 'pool', offset: 1 }]]);
    expect(q.prefixes).toEqual([['deploy', 'deploi']]);
    expect(tsqueryOf(q)).toBe("('retri' | 'connect' | 'pool' | 'deploy':* | 'deploi':*) & ('connect' <1> 'pool')");
  });

  it('cuts a prefix\'s words as text is cut, so a camelCase prefix finds the last part it names', () => {
    // OOMKilled is indexed as "oom" and "kill": the prefix is of the last part, the parts before it are words.
    expect(parseQuery('OOMKill*')).toMatchObject({ terms: ['oom'], prefixes: [['kill']] });
    expect(parseQuery('ConnectionPoolExhaust*')).toMatchObject({ terms: ['connect', 'pool'], prefixes: [['exhaust']] });
    expect(parseQuery('Kafka*').prefixes).toEqual([['kafka']]);
  });

  it('reads "may" as the month only where it is one: capitalised, next to a number, or after a word that leads a time', () => {
    const mayTerms = (text: string) => analyze(text).filter((t) => t.term === 'mai').length;
    for (const month of ['released in May', 'MAY REPORT', 'may 12', '12 may 2026', 'since may', 'the 5th of may', 'deployed on\n12\tmay']) expect(mayTerms(month), month).toBe(1);
    for (const verb of ['the deploy may fail', 'this may take a while', 'it may', 'may']) expect(mayTerms(verb), verb).toBe(0);
    // A date still gives its month, whatever the words around it.
    expect(mayTerms('it may be 2026-05-12')).toBe(1);
    // A query reads it in the whole query, not word by word.
    expect(parseQuery('what happened in may').terms).toContain('mai');
    expect(parseQuery('May 12 outage').terms).toContain('mai');
    expect(parseQuery('what may break the build').terms).not.toContain('mai');
  });

  it('matches a number that the analysis cuts from its letters by its digits, as a prefix of it could not', () => {
    // "the 5th" is indexed as "5": no term starts with "5th".
    expect(parseQuery('5th*')).toMatchObject({ terms: ['5'], prefixes: [['5th']] });
    expect(parseQuery('20T10*')).toMatchObject({ terms: ['20', '10'] });
    // A number or name kept whole stays a prefix alone.
    expect(parseQuery('05*')).toMatchObject({ terms: [], prefixes: [['05']] });
    expect(parseQuery('v4*')).toMatchObject({ terms: [], prefixes: [['v4']] });
    expect(parseQuery('3pm*')).toMatchObject({ terms: [], prefixes: [['3pm']] });
  });

  it('drops the words that frame a question from its terms, never from phrases nor from other queries', () => {
    const q = (text: string) => parseQuery(text, { questions: true }).terms;
    expect(q('What kind of dog does Tom have?')).toEqual(['dog', 'tom']);
    expect(q('When did Maya go on holiday')).toEqual(['maya', 'holidai']);
    expect(q('how did the "kind of magic" release go?')).toEqual(['kind', 'magic', 'releas']);
    // Not a question: every word counts; without the option nothing changes; frame words alone still match.
    expect(q('go runtime kind cluster')).toEqual(['go', 'runtim', 'kind', 'cluster']);
    expect(parseQuery('What kind of dog?').terms).toEqual(['kind', 'dog']);
    expect(q('what happened?')).toEqual(['happen']);
    expect([withoutFrame('What kind of dog does Tom have?'), withoutFrame('what happened?'), withoutFrame('go kind')]).toEqual(['of dog Tom', 'what happened?', 'go kind']);
  });

  it('finds the day and time in ISO 8601 date-times, the number in ordinals, and a date\'s month by name', () => {
    const terms = (text: string) => analyze(text).map((t) => `${t.term}@${t.pos}${t.overlap ? '+' : ''}`);
    expect(terms('deployed 2026-11-20T10:05:00Z')).toEqual(['deploi@0', '2026@1', '11@2', 'novemb@2+', '20@3', '10@4', '05@5', '5@5+', '00@6', '0@6+']);
    // A clock hour gives its hour of the day, as a time of day written with a colon does.
    expect(terms('at 9am, 12am, 12pm and 11pm; not 13pm')).toEqual(['9am@1', '9@1+', '12am@2', '0@2+', '12pm@3', '12@3+', '11pm@5', '23@5+', '13pm@7']);
    expect(parseQuery('deploys after 3pm').terms).toEqual(['deploi', '3pm', '15']);
    // Padded parts are also found without their zeros: the 5th is 2026-11-05, 9 is 09:00.
    expect(terms('2026-05-04T09:30')).toEqual(['2026@0', '05@1', '5@1+', 'mai@1+', '04@2', '4@2+', '09@3', '9@3+', '30@4']);
    expect(terms('on the 20th, the 3rd and 1st try')).toEqual(['20@2', '3@4', '1@6', 'try@7']);
    // Names that mix letters and digits stay whole; a number that is no calendar date has no month.
    expect(terms('k8s v4 ec2 sha256 3pm 5xx 2026-13-01 12-05-2026 20261120 000')).toEqual(['k8s@0', 'v4@1', 'ec2@2', 'sha256@3', '3pm@4', '15@4+', '5xx@5', '2026@6', '13@7', '01@8', '1@8+', '12@9', '05@10', '5@10+', '2026@11', '20261120@12', '000@13', '0@13+']);
    // The month name counts as a term, not as a word: the text is no longer for it.
    const dated = docTerms(entry({ value: 'released 2026-05-04' }));
    const plain = docTerms(entry({ value: 'released 2026 05 04' }));
    expect(dated.tf.get('mai')).toBe(1);
    expect(dated.length).toBe(plain.length);
    expect(tsvectorOf(entry({ value: 'released 2026-05-04' })).length).toBe(dated.length);
  });

  it('gives number words their digits, so that either finds the other', () => {
    const terms = (text: string) => analyze(text).map((t) => `${t.term}@${t.pos}${t.overlap ? '+' : ''}`);
    expect(terms('Retry three times, twenty seconds apart')).toEqual(['retri@0', 'three@1', '3@1+', 'time@2', 'twenti@3', '20@3+', 'second@4', 'apart@5']);
    // "one" is mostly a pronoun; digits give no words back (the query is analysed the same way).
    expect(terms('no one retried 3 times')).toEqual(['on@1', 'retri@2', '3@3', 'time@4']);
    expect(parseQuery('three retries').terms).toEqual(['three', '3', 'retri']);
    expect(containsPhrase(analyze('retry three times'), parseQuery('"retry 3 times"').phrases[0]!)).toBe(true);
    // A phrase's number word also stands for its digits, and its digits for nothing else.
    const worded3 = parseQuery('"retry three times"').phrases[0]!;
    expect(worded3).toEqual([{ term: 'retri', offset: 0 }, { term: 'three', offset: 1, alternatives: ['3'] }, { term: 'time', offset: 2 }]);
    expect(containsPhrase(analyze('retry 3 times'), worded3)).toBe(true);
    expect(containsPhrase(analyze('retry three times'), worded3)).toBe(true);
    expect(containsPhrase(analyze('retry 4 times'), worded3)).toBe(false);
    expect(containsPhrase(analyze('retry times 3'), worded3)).toBe(false);
    expect(tsqueryOf(parseQuery('"retry three times"'))).toBe("('retri' | 'three' | '3' | 'time') & ('retri' <1> ('three' | '3') <1> 'time')");
    const worded = docTerms(entry({ value: 'retry three times' }));
    expect(worded.tf.get('3')).toBe(1);
    expect(worded.length).toBe(docTerms(entry({ value: 'retry 3 times' })).length);
    // One span for the word, whichever of its two terms the query named.
    expect(highlight(entry({ value: 'retry three times' }), (term) => term === '3')).toEqual([{ field: 'value', fragment: 'retry three times', matches: [[6, 11]] }]);
  });

  it('queries a typed date by its month too, and keeps phrases to the words typed with the terms beside them', () => {
    // The month stands beside its digits, as in the text's analysis.
    expect(parseQuery('deploys on 2026-11-20').terms).toEqual(['deploi', '2026', '11', 'novemb', '20']);
    expect(parseQuery('the 20th of November').terms).toEqual(['20', 'novemb']);
    const q = parseQuery('"released 2026-11-20"');
    expect(q.phrases).toEqual([[{ term: 'releas', offset: 0 }, { term: '2026', offset: 1 }, { term: '11', offset: 2, alternatives: ['novemb'] }, { term: '20', offset: 3 }]]);
    expect(containsPhrase(analyze('we released 2026-11-20 at noon'), q.phrases[0]!)).toBe(true);
    expect(containsPhrase(analyze('we released 2026-11-21'), q.phrases[0]!)).toBe(false);
    // The month's name stands where its digits do, in a phrase as in PostgreSQL's positions.
    expect(containsPhrase(analyze('shipped 2026-11-20'), parseQuery('"november 20"').phrases[0]!)).toBe(true);
    expect(containsPhrase(analyze('shipped 2026-11-20'), parseQuery('"20 november"').phrases[0]!)).toBe(false);
    // A date's month and its digits are one span in a highlight, whichever the query named.
    const dated = entry({ value: 'shipped 2026-11-20' });
    expect(highlight(dated, (term) => term === 'novemb' || term === '11')).toEqual([{ field: 'value', fragment: 'shipped 2026-11-20', matches: [[13, 15]] }]);
    expect(highlight(dated, (term) => term === 'novemb')).toEqual([{ field: 'value', fragment: 'shipped 2026-11-20', matches: [[13, 15]] }]);
    const padded = entry({ value: 'shipped 2026-05-04' });
    expect(highlight(padded, (term) => ['05', '5', 'mai', '4'].includes(term))).toEqual([{ field: 'value', fragment: 'shipped 2026-05-04', matches: [[13, 15], [16, 18]] }]);
  });

  it('stores for PostgreSQL exactly the weighted frequencies the in-process index counts', () => {
    const e = entry();
    const { literal, length } = tsvectorOf(e);
    const mine = docTerms(e);
    expect(length).toBe(mine.length);
    expect(Object.fromEntries(weightedTf(literal))).toEqual(Object.fromEntries(mine.tf));
  });

  it('reads from a tsvector the frequencies of the query lexemes alone, as a full parse would', () => {
    const literal = "'checkout':1A,7 'deploi':3B,9C 'deploy':4 'pod':5B,6B,8B 'pool':2A";
    const full = weightedTf(literal);
    const expected = (terms: string[], prefixes: string[]) => [...full].filter(([t]) => terms.includes(t) || prefixes.some((p) => t.startsWith(p)));
    for (const [terms, prefixes] of [[['pod', 'checkout'], []], [['pool', 'absent'], ['dep']], [['deploi'], ['deploy', 'deploi', 'po']], [[], ['x']]] as [string[], string[]][]) {
      expect(tfReader(terms, prefixes)(literal)).toEqual(expected(terms, prefixes));
    }
    expect(tfReader(['pod'], [])(literal)).toEqual([['pod', 3]]);
    // A lexeme without positions has no frequency to read.
    expect(tfReader(['pod', 'pool'], [])("'pod' 'pool':2A")).toEqual([['pool', 1.5]]);
    // Letters past ASCII, and lexemes longer than the reader's table tells apart.
    const long = 'x'.repeat(40);
    const wide = `'café':3B 'cafe':1A '${long}':2 '${long}y':4B 'zürich':5C 'éclair':6B,7B`;
    expect(tfReader(['café', `${long}y`, 'zürich', 'éclair'], [])(wide)).toEqual([['café', 1], [`${long}y`, 1], ['zürich', 1.5], ['éclair', 2]]);
    expect(Object.fromEntries(weightedTf(wide))).toMatchObject({ café: 1, [`${long}y`]: 1, zürich: 1.5, éclair: 2 });
    expect(tfReader([], [`${'x'.repeat(35)}`, 'zü', 'éc'])(wide).map(([t]) => t)).toEqual([long, `${long}y`, 'zürich', 'éclair']);
    expect(tfReader([], [''])(wide)).toEqual([...weightedTf(wide)]);
    // Random tsvectors over a two-letter alphabet, where lexemes are often prefixes of one
    // another or of equal length, against random terms and prefixes.
    const draw = random(7);
    const next = (n: number): number => Math.floor(draw() * n);
    const word = (): string => Array.from({ length: 1 + next(4) }, () => 'ab'[next(2)]).join('');
    for (let round = 0; round < 300; round++) {
      const lexemes = [...new Set(Array.from({ length: 1 + next(8) }, word))];
      const text = lexemes.map((l) => `'${l}':${Array.from({ length: 1 + next(3) }, () => `${1 + next(200)}${['A', 'B', 'C', ''][next(4)]}`).join(',')}`).join(' ');
      const terms = Array.from({ length: next(4) }, word);
      const prefixes = Array.from({ length: next(2) }, word);
      const all = weightedTf(text);
      expect(tfReader(terms, prefixes)(text)).toEqual([...all].filter(([t]) => terms.includes(t) || prefixes.some((p) => t.startsWith(p))));
    }
  });

  it('fuses rankings by reciprocal rank and weighs confidence and recency gently', () => {
    const now = Date.parse('2026-11-01T00:00:00.000Z');
    const a = entry({ key: 'a' });
    const b = entry({ key: 'b', confidence: 0.2 });
    const ranked = fuse([{ entry: a, score: 5 }, { entry: b, score: 4 }], [{ entry: b, score: 0.9 }, { entry: a, score: 0.8 }], { now, limit: 10, vectorWeight: 1 });
    expect(ranked.map((r) => r.entry.key)).toEqual(['a', 'b']);
    expect(ranked[1]?.parts).toMatchObject({ text: { rank: 2 }, vector: { rank: 1 }, confidence: 0.92 });
  });

  it('ranks equally relevant entries written in the same hour by address, whatever their write order', () => {
    const now = Date.parse('2026-11-01T12:00:00.000Z');
    const later = entry({ key: 'turn-2', written_at: '2026-11-01T09:00:00.900Z' });
    const earlier = entry({ key: 'turn-1', written_at: '2026-11-01T09:00:00.100Z' });
    const ranked = fuse([{ entry: later, score: 2 }, { entry: earlier, score: 2 }], null, { now, limit: 10, vectorWeight: 1 });
    expect(ranked.map((r) => r.entry.key)).toEqual(['turn-1', 'turn-2']);
    // A day apart, recency still breaks the tie.
    const older = entry({ key: 'turn-0', written_at: '2026-10-31T09:00:00.000Z' });
    expect(fuse([{ entry: older, score: 2 }, { entry: later, score: 2 }], null, { now, limit: 10, vectorWeight: 1 })[0]?.entry.key).toBe('turn-2');
  });

  it('embeds offline and deterministically, closer for related words', async () => {
    const embedder = new BuiltinEmbedder();
    const [outage, downtime, lunch] = await embedder.embed(['database outage', 'database downtime', 'team lunch on friday']);
    const cos = (x: Float32Array, y: Float32Array) => x.reduce((s, v, i) => s + v * (y[i] as number), 0);
    expect(outage?.length).toBe(100);
    expect(cos(outage as Float32Array, downtime as Float32Array)).toBeGreaterThan(cos(outage as Float32Array, lunch as Float32Array) + 0.3);
    expect(Array.from((await embedder.embed(['database outage']))[0] as Float32Array)).toEqual(Array.from(outage as Float32Array));
    const [expired, lunchMatch] = await embedder.wordMatch('the certificate lapsed', ['TLS certificate expired on the load balancer', 'team lunch on friday']);
    expect(expired).toBeGreaterThan((lunchMatch as number) + 0.3);
  });

  it('fuses by rescaled scores by default, where a ranking whose candidates all tie adds nothing', () => {
    const now = Date.parse('2026-11-01T00:00:00.000Z');
    const [a, b, c] = ['a', 'b', 'c'].map((key) => entry({ key }));
    // Text: every candidate matched only a common word (a speaker's name), in arbitrary order.
    const text = [c, a, b].map((e) => ({ entry: e as Entry, score: 1.3 }));
    const vector = [{ entry: b as Entry, score: 0.8 }, { entry: c as Entry, score: 0.5 }, { entry: a as Entry, score: 0.4 }];
    expect(fuse(text, vector, { now, limit: 10, vectorWeight: 1, by: 'scores' }).map((r) => r.entry.key)).toEqual(['b', 'c', 'a']);
    // Reciprocal ranks give the arbitrary text order as much say as the vector ranking.
    expect(fuse(text, vector, { now, limit: 10, vectorWeight: 1, by: 'ranks' })[0]?.entry.key).toBe('c');
  });

  it('ranks the first results alike however deep the rankings are read (the limit asked for)', () => {
    const now = Date.parse('2026-11-01T00:00:00.000Z');
    const entries = Array.from({ length: 150 }, (_, i) => entry({ key: `e${String(i).padStart(3, '0')}` }) as Entry);
    // Text and vector disagree; their scores fall at different paces past the 50th candidate.
    const text = entries.map((e, i) => ({ entry: e, score: 20 - i * (i < SCALE_DEPTH ? 0.1 : 0.12) }));
    const vector = [...entries].reverse().map((e, i) => ({ entry: e, score: 0.9 - i * 0.004 }));
    const keys = (depth: number) =>
      fuse(text.slice(0, depth), vector.slice(0, depth), { now, limit: 10, vectorWeight: 1, by: 'scores' }).map((r) => `${r.entry.key} ${r.score.toFixed(9)}`);
    expect(keys(150)).toEqual(keys(SCALE_DEPTH));
  });

  it('weighs the text ranking by the share of the query ceiling its best candidate holds', () => {
    const now = Date.parse('2026-11-01T00:00:00.000Z');
    const [a, b, c] = ['a', 'b', 'c'].map((key) => entry({ key }) as Entry);
    // Text prefers a over b; the averaged vector and the word-by-word ranking prefer b a little.
    const text = [{ entry: a!, score: 6 }, { entry: b!, score: 2 }, { entry: c!, score: 1 }];
    const vector = [{ entry: b!, score: 0.6 }, { entry: a!, score: 0.55 }, { entry: c!, score: 0.2 }];
    const words = [{ entry: b!, score: 0.7 }, { entry: a!, score: 0.68 }, { entry: c!, score: 0.3 }];
    const first = (textCeiling?: number) => fuse(text, vector, { now, limit: 10, vectorWeight: 1, words, textCeiling, by: 'scores' })[0]?.entry.key;
    // Its best candidate holds most of what the query's words could score: text decides.
    expect(first(7)).toBe('a');
    // It matched a sliver of the query (one common word of many): the other rankings decide.
    expect(first(60)).toBe('b');
    // No ceiling known (or none above zero): the text ranking keeps its full weight.
    expect(first(undefined)).toBe('a');
    expect(first(0)).toBe('a');
    // The share never passes one, whatever the ceiling.
    const parts = (textCeiling: number) => fuse(text, vector, { now, limit: 10, vectorWeight: 1, words, textCeiling, by: 'scores' }).find((r) => r.entry.key === 'a')?.parts.relevance;
    expect(parts(3)).toBe(parts(6));
  });

  it('answers a query ceiling of the limit of every word typed, unseen words at an unseen word idf', () => {
    const df = new Map([['kafka', 3], ['broker', 40]]);
    const ceiling = queryCeiling(['kafka', 'broker', 'zebra', 'kafka'], (t) => df.get(t) ?? 0, 1000);
    expect(ceiling).toBeCloseTo((idf(3, 1000) + idf(40, 1000) + idf(0, 1000)) * (K1 + 1), 10);
    expect(queryCeiling([], () => 0, 1000)).toBe(0);
  });

  it('round-trips the lexical graph and expands queries with related words, weighted below the words typed', () => {
    const pairs: [number, number][] = [[0, 3], [0, 200], [1, 2], [5, 70_000], [5, 70_001]];
    const graph = decodeGraph(encodeGraph(70_002, pairs), 70_002);
    const neighbours = (r: number) => Array.from(graph.neighbours.subarray(graph.offsets[r], graph.offsets[r + 1])).sort((x, y) => x - y);
    expect([neighbours(0), neighbours(3), neighbours(5), neighbours(70_001), neighbours(4)]).toEqual([[3, 200], [0], [70_000, 70_001], [5], []]);
    const embedder = new BuiltinEmbedder();
    const related = embedder.relatedWords('physician on call');
    expect(related.map((r) => r.word)).toContain('doctor');
    expect(related.every((r) => r.weight > 0 && r.weight < 1)).toBe(true);
    const q = parseQuery('physician doctor');
    expect(expandQuery(q, related).map((e) => e.term)).not.toContain('doctor');
    expect(new BuiltinEmbedder({ lexicon: false }).relatedWords('physician')).toEqual([]);
  });

  it('matches a name word by word written either way, and nothing else by the vector of a name it does not know', async () => {
    const embedder = new BuiltinEmbedder();
    // Typed whole: a text writing it in parts matches as fully as one writing it whole.
    const [camel, glued, spaced, other] = await embedder.wordMatch('pgbouncer', ['Added PgBouncer', 'added pgbouncer', 'a pg bouncer', 'added a bouncer']);
    expect(camel).toBe(1);
    expect(glued).toBeCloseTo(1, 6);
    expect(Math.max(spaced as number, other as number)).toBeLessThan(0.5);
    // Typed in parts: a text writing it whole matches each of its words.
    const [whole, partly] = await embedder.wordMatch('PgBouncer', ['added pgbouncer', 'added a bouncer']);
    expect(whole).toBe(1);
    expect(partly).toBeLessThan(0.9);
    expect((await embedder.wordMatch('max_connections raised', ['raised maxconnections']))[0]).toBeCloseTo(1, 6);
  });

  it('matches a word the table lacks by its stem, and words it holds by their vectors, stem or not', async () => {
    const embedder = new BuiltinEmbedder();
    // Jargon the table lacks: each inflection's direction is a hash of its own, so only the stem relates them.
    const [inflected, other] = await embedder.wordMatch('frobnicators', ['restarted the frobnicator', 'restarted the scheduler']);
    expect(inflected).toBeCloseTo(1, 6);
    expect(other).toBeLessThan(0.5);
    expect((await embedder.wordMatch('frobnicator', ['two frobnicators restarted']))[0]).toBeCloseTo(1, 6);
    // Words the table holds keep their vectors' judgement, though a stem joins them.
    expect(termOf('general')).toBe(termOf('generate'));
    expect((await embedder.wordMatch('general', ['generate']))[0]).toBeLessThan(0.9);
  });

  it('ranks word by word and expands alike whatever an embedder ranked or expanded before', async () => {
    // Over 256 distinct words (the similarity table grows) and six query words (four summed together, two alone).
    const many = Array.from({ length: 300 }, (_, i) => `word${i}`).join(' ');
    const texts = ['TLS certificate expired on the load balancer', many, 'the doctor renewed the certificate at the load balancer', 'team lunch on friday'];
    const query = 'certificate lapsed balancer physician renewal friday';
    const fresh = await new BuiltinEmbedder().wordMatch(query, texts);
    const used = new BuiltinEmbedder();
    await used.wordMatch('lunch with the team', [...texts].reverse());
    await used.wordMatch(query, texts.slice(1));
    expect(await used.wordMatch(query, texts)).toEqual(fresh);
    expect((await used.wordMatch('certificate expired', ['certificate expired']))[0]).toBeCloseTo(1, 6);
    // A related word cached for one query is still left out when a later query types it.
    expect(used.relatedWords('physician').map((r) => r.word)).toContain('doctor');
    const both = used.relatedWords('physician doctor');
    expect(both.map((r) => r.word)).not.toContain('doctor');
    expect(both).toEqual(new BuiltinEmbedder().relatedWords('physician doctor'));
  });

  it('sums word similarities in WebAssembly to the same floats as in JS, past its memory bound too', () => {
    let seed = 7;
    const random = () => ((seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) / 2 ** 32) - 0.5;
    const dim = 100;
    // The kernels compile here (else the tables below would compare JS with itself).
    expect(cosineKernels(wasmMemory(1))).not.toBeNull();
    const words = Array.from({ length: 600 }, () => Float32Array.from({ length: dim }, random));
    // Query words in quads of lanes: 7 (one padded lane), 5 (three), 1 (three), 8 (none).
    for (const n of [7, 5, 1, 8]) {
      const query = Array.from({ length: n }, () => Float32Array.from({ length: dim }, random));
      const flat = new Float32Array(query.length * dim);
      query.forEach((v, i) => flat.set(v, i * dim));
      const expected = words.map((v) => {
        const out = new Float32Array(query.length);
        cosines(flat, query.length, dim, v, out, 0);
        return Array.from(out);
      });
      // Default bounds (all in the memory), a bound the 600 rows outgrow half way (they move to
      // JS), and an arena of 70 words (it starts afresh mid-call, and words keep other homes).
      const tables = [new WordSimilarities(dim), new WordSimilarities(dim, 16_000), new WordSimilarities(dim, undefined, 70 * dim * 4)];
      for (const table of tables) {
        const homed = words.map((vector) => ({ vector, home: 0, homeGeneration: 0 }));
        for (let round = 0; round < 2; round++) {
          table.begin(query);
          const rows = homed.map((word) => table.add(word));
          expect(rows.map((r) => Array.from(table.sims.subarray(r * table.stride, r * table.stride + query.length)))).toEqual(expected);
          // A text's best match per query word over its words' rows (none below 0).
          const chosen = Int32Array.from({ length: 40 }, (_, k) => (k * 37) % rows.length);
          const best = Array.from(table.best(chosen, chosen.length).subarray(0, query.length));
          expect(best).toEqual(query.map((_, i) => Math.max(0, ...Array.from(chosen, (r) => expected[r]?.[i] as number))));
          expect(Array.from(table.best(chosen, 0).subarray(0, query.length))).toEqual(query.map(() => 0));
        }
      }
    }
  });

  it('takes the embeddings endpoint from the environment, and needs a model with it', () => {
    const c = parseConfig({ CAIRN_EMBEDDINGS_URL: 'http://localhost:11434/v1', CAIRN_EMBEDDINGS_MODEL: 'nomic-embed-text', CAIRN_EMBEDDINGS_API_KEY: 'k' });
    expect([c.embeddingsUrl, c.embeddingsModel, c.embeddingsApiKey]).toEqual(['http://localhost:11434/v1', 'nomic-embed-text', 'k']);
    expect(() => parseConfig({ CAIRN_EMBEDDINGS_URL: 'http://localhost:11434/v1' })).toThrow(ConfigError);
    expect(() => parseConfig({ CAIRN_EMBEDDINGS_URL: 'not a url', CAIRN_EMBEDDINGS_MODEL: 'm' })).toThrow(/CAIRN_EMBEDDINGS_URL/);
    expect([parseConfig({}).searchProfile, parseConfig({ CAIRN_SEARCH_PROFILE: 'v1' }).searchProfile]).toEqual(['v2', 'v1']);
    expect(() => parseConfig({ CAIRN_SEARCH_PROFILE: 'v3' })).toThrow(/CAIRN_SEARCH_PROFILE/);
  });
});
