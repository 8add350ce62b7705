// Builds the built-in lexicon's acronym table, packages/server/src/embed/data/acronyms.tsv,
// from V.E.R.A. (Virtual Entity of Relevant Acronyms, August 2020: about 13k computing
// acronyms and their expansions), which query expansion uses in both directions: a query
// that says "file transfer" also matches entries that say FTP, and one that writes FTP also
// matches "File Transfer Protocol" (embed/acronyms.ts).
//
//   apt-get download dict-vera && dpkg-deb -x dict-vera_*.deb /tmp/vera
//   node scripts/distill-acronyms.ts /tmp/vera/usr/share/dictd/vera.dict.dz
//
// (Installing dict-vera instead puts the file at /usr/share/dictd/vera.dict.dz, the default,
// but pulls in the dictd server.) V.E.R.A. is under the GNU Free Documentation License,
// version 1.1 or later, with no invariant sections; the table is a modified version of it
// and carries the same licence (src/embed/data/VERA-LICENSE).
//
// Then scripts/data/software-acronyms.tsv, the project's own list of software teams' acronyms
// that V.E.R.A. lacks or gives in other senses (PR as pull request, SLO, SRE), replaces
// V.E.R.A.'s meanings of the acronyms it names, read by the same rules.
//
// Per line of the output: the acronym in lower case, a tab, then its expansions separated by
// tabs, each as its content words in lower case. An acronym with one expansion has it marked
// with a leading "*": an acronym written in capitals in a query expands to it (one with
// several meanings does not: which one is meant cannot be told from the table).
import { readFileSync, writeFileSync } from 'node:fs';
import { gunzipSync } from 'node:zlib';
import { STOP_WORDS, words } from '../packages/server/src/search-rules/analyzer.ts';
import { loadTable } from '../packages/server/src/embed/word-table.ts';

const source = process.argv[2] ?? '/usr/share/dictd/vera.dict.dz';
const table = loadTable(new URL('../packages/server/src/embed/data/glove-100d.bin', import.meta.url));
/** Expansions of fewer content words say too little to find by ("Out Of Memory" is one word, memory). */
const MIN_WORDS = 2;
const MAX_WORDS = 6;

const text = gunzipSync(readFileSync(source)).toString('utf8');
const expansions = new Map<string, string[][]>();
let head: string | null = null;
let body: string[] = [];
const flush = (): void => {
  if (head !== null && body.length > 0) add(head, body.join(' '));
  body = [];
};
const add = (headword: string, definition: string): void => {
  // Headwords are acronyms in capitals (digits allowed, at least two letters).
  if (!/^[A-Z0-9]{2,8}$/.test(headword) || (headword.match(/[A-Z]/g)?.length ?? 0) < 2) return;
  const acronym = headword.toLowerCase();
  // Drop the subject notes ("(Internet, RFC 959)", "[cable]", quoted spellings) but keep a
  // letter marked inside a word: "(A)utomated", "[O]nline".
  const plain = definition.replace(/([A-Za-z]?)[([]([A-Za-z]{1,2})[)\]](?=[a-z])/g, '$1$2').replace(/\([^)]*\)|\[[^\]]*\]|"[^"]*"/g, ' ');
  const content = [...words(plain)].map((w) => w.word).filter((w) => !STOP_WORDS.has(w) && /^[a-z]{2,}$/.test(w));
  if (content.length < MIN_WORDS || content.length > MAX_WORDS || content.includes(acronym)) return;
  const list = expansions.get(acronym) ?? [];
  if (!list.some((e) => e.join(' ') === content.join(' '))) list.push(content);
  expansions.set(acronym, list);
};
for (const line of text.split('\n')) {
  if (line.startsWith(' ')) {
    if (line.trim() === '') flush();
    else body.push(line.trim());
  } else if (line.trim() !== '') {
    flush();
    head = line.trim();
  }
}
flush();

const own = readFileSync(new URL('./data/software-acronyms.tsv', import.meta.url), 'utf8');
for (const line of own.split('\n')) {
  if (line.startsWith('#') || line.trim() === '') continue;
  const [acronym, ...meanings] = line.split('\t');
  if (!acronym || meanings.length === 0) throw new Error(`software-acronyms.tsv: a line without an acronym and its meanings: ${JSON.stringify(line)}`);
  expansions.delete(acronym);
  for (const meaning of meanings) add(acronym.toUpperCase(), meaning);
}

/**
 * Many acronyms are also words ("care", "audit", "did"): as a word they would expand
 * ordinary text and be added to ordinary questions, so the 10,000 commonest words of the
 * GloVe table are left out (API, CPU and FTP are rarer).
 */
const COMMON_WORDS = 10_000;
const isCommonWord = (acronym: string): boolean => (table.rows.get(acronym) ?? Infinity) < COMMON_WORDS;

const lines = [...expansions]
  .filter(([acronym]) => !isCommonWord(acronym))
  .sort(([a], [b]) => (a < b ? -1 : 1))
  .map(([acronym, list]) => {
    const forward = list.length === 1 ? '*' : '';
    return [acronym, ...list.map((words) => `${forward}${words.join(' ')}`)].join('\t');
  });
const out = new URL('../packages/server/src/embed/data/acronyms.tsv', import.meta.url);
writeFileSync(out, `${lines.join('\n')}\n`);
console.log(`wrote ${lines.length} acronyms, ${lines.reduce((n, l) => n + l.split('\t').length - 1, 0)} expansions, to ${out.pathname}`);
