// Builds the built-in embedder's lexicon from WordNet 3.0: src/embed/data/wordnet-graph.bin,
// which words of the GloVe table WordNet relates (same synset, hypernym/hyponym, instance,
// similar-to, derivationally related, "see also"), which expands queries; and
// src/embed/data/glove-100d-wordnet.bin, those words' vectors retrofitted to the graph
// (Faruqui et al. 2015, scripts/retrofit-vectors.ts), which replace their GloVe rows.
//
//   node scripts/distill-wordnet.ts [/usr/share/wordnet]
//
// WordNet comes from Debian's wordnet-base package (scripts/setup.sh installs it); its
// licence (WordNet 3.0, Princeton University: use, copy, modify and distribute with the
// copyright notice kept) is reproduced in src/embed/data/WORDNET-LICENSE. Only single-word
// lemmas that are in the GloVe table are kept, as pairs of table rows, so the file is small.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadTable } from '../packages/server/src/embed/word-table.ts';
import { decodeGraph, encodeGraph } from '../packages/server/src/embed/word-graph.ts';
import { encodeTable } from '../packages/server/src/embed/word-table.ts';
import { retrofit } from './retrofit-vectors.ts';

const dir = process.argv[2] ?? '/usr/share/wordnet';
const table = loadTable(new URL('../packages/server/src/embed/data/glove-100d.bin', import.meta.url));
/** Pointers whose two synsets mean nearly the same or one a kind of the other. */
const RELATED = new Set(['@', '@i', '~', '~i', '&', '+', '^', '$']);
/** A synset with more related lemmas than this is a category (e.g. every dog breed): only its synonyms count. */
const MAX_SYNSET_FANOUT = 40;

interface Synset {
  rows: number[];
  pointers: string[];
}

const synsets = new Map<string, Synset>();
for (const pos of ['noun', 'verb', 'adj', 'adv']) {
  for (const line of readFileSync(join(dir, `data.${pos}`), 'latin1').split('\n')) {
    if (!/^[0-9]{8} /.test(line)) continue;
    const fields = (line.split(' | ')[0] as string).trim().split(/\s+/);
    const offset = fields[0] as string;
    const type = fields[2] === 's' ? 'a' : (fields[2] as string);
    const count = Number.parseInt(fields[3] as string, 16);
    const rows: number[] = [];
    for (let i = 0; i < count; i++) {
      const lemma = (fields[4 + i * 2] as string).toLowerCase().replace(/\([a-z]+\)$/, '');
      const row = table.rows.get(lemma);
      if (row !== undefined && /^[a-z]+$/.test(lemma)) rows.push(row);
    }
    let at = 4 + count * 2;
    const pointerCount = Number(fields[at]);
    at += 1;
    const pointers: string[] = [];
    for (let i = 0; i < pointerCount; i++, at += 4) {
      const [symbol, target, targetPos] = [fields[at], fields[at + 1], fields[at + 2]] as string[];
      if (RELATED.has(symbol as string)) pointers.push(`${targetPos === 's' ? 'a' : targetPos}${target}`);
    }
    synsets.set(`${type}${offset}`, { rows, pointers });
  }
}

const pairs = new Set<number>();
const link = (a: number, b: number): void => {
  if (a === b) return;
  // Both rows are below 2^20 (the table has 100k words): one number holds the pair.
  pairs.add(a < b ? a * 2 ** 20 + b : b * 2 ** 20 + a);
};
for (const synset of synsets.values()) {
  for (const a of synset.rows) for (const b of synset.rows) link(a, b);
  const related = synset.pointers.flatMap((p) => synsets.get(p)?.rows ?? []);
  if (related.length > MAX_SYNSET_FANOUT) continue;
  for (const a of synset.rows) for (const b of related) link(a, b);
}

const sorted = [...pairs].sort((x, y) => x - y).map((p) => [Math.floor(p / 2 ** 20), p % 2 ** 20] as [number, number]);
const out = new URL('../packages/server/src/embed/data/wordnet-graph.bin', import.meta.url);
const bytes = encodeGraph(table.scales.length, sorted);
writeFileSync(out, bytes);
console.log(`wrote ${sorted.length} word pairs (${bytes.length} bytes) to ${out.pathname}`);

// The retrofitted vectors of the words the graph moves, as a table of their own that the
// embedder lays over the GloVe table (words in table order).
const moved = retrofit(table, decodeGraph(bytes, table.scales.length));
const words = new Array<string>(table.scales.length);
for (const [word, row] of table.rows) words[row] = word;
const delta = encodeTable(moved.rows.map((r) => words[r] as string), table.dimension, Float64Array.from(moved.vectors));
const deltaOut = new URL('../packages/server/src/embed/data/glove-100d-wordnet.bin', import.meta.url);
writeFileSync(deltaOut, delta);
console.log(`wrote ${moved.rows.length} retrofitted words (${delta.length} bytes) to ${deltaOut.pathname}`);
