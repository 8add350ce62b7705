import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ACRONYM_WEIGHT, Acronyms } from '../../packages/server/src/embed/acronyms.ts';
import { BuiltinEmbedder } from '../../packages/server/src/embed/builtin-embedder.ts';

const SHIPPED = new URL('../../packages/server/src/embed/data/acronyms.tsv', import.meta.url);

/** A table in the shipped format: FTP with two meanings, CDN and RBAC with one each. */
const table = new Acronyms(
  ['cdn\t*content delivery network', 'ftp\tfile transfer protocol\tfoiled twisted pair', 'rbac\t*role based access control', ''].join('\n'),
);
const acronymsOf = (query: string) => table.spelledOut(query).map((s) => s.acronym);

describe('acronyms', () => {
  it('finds an acronym spelled out by most of its words, two of them side by side, however inflected', () => {
    expect(table.spelledOut('the old file transfer from the partner')).toEqual([{ acronym: 'ftp', words: ['file', 'transfer'], matched: 2, meanings: 2 }]);
    expect(acronymsOf('clear static files out of the content network')).toEqual(['cdn']);
    expect(acronymsOf('file transfers failing')).toEqual(['ftp']);
    // Stop words between the two do not part them; other words do.
    expect(acronymsOf('the content of the network')).toEqual(['cdn']);
    expect(acronymsOf('content on the office network')).toEqual([]);
    // Two of four words is not most of Role Based Access Control.
    expect(acronymsOf('access control for the office')).toEqual([]);
    expect(acronymsOf('role based access control')).toEqual(['rbac']);
    expect(table.spelledOut('role based access control')[0]?.matched).toBe(4);
    // One word is never enough.
    expect(acronymsOf('the network is down')).toEqual([]);
  });

  it('expands an acronym written in capitals only when it has one meaning', () => {
    expect(table.written('purge the CDN cache')).toEqual([['content', 'delivery', 'network']]);
    expect(table.written('purge the cdn cache')).toEqual([]);
    expect(table.written('the Cdn cache')).toEqual([]);
    expect(table.written('the FTP import')).toEqual([]);
  });

  it('weighs a spelled-out acronym as the words that said it, shared among its meanings, and one word\'s weight over a written one\'s expansion', () => {
    // FTP has two meanings: the text may mean the other one.
    expect(table.related('the old file transfer job')).toEqual([{ word: 'ftp', weight: ACRONYM_WEIGHT }]);
    expect(table.related('the content delivery network')).toEqual([{ word: 'cdn', weight: ACRONYM_WEIGHT * 3 }]);
    expect(table.related('who owns the CDN')).toEqual(['content', 'delivery', 'network'].map((word) => ({ word, weight: ACRONYM_WEIGHT / 3 })));
    expect(table.related('')).toEqual([]);
  });

  it('ships a table of acronyms in lower case, without the common words that are also acronyms', () => {
    const lines = readFileSync(SHIPPED, 'utf8').trimEnd().split('\n');
    expect(lines.length).toBeGreaterThan(5000);
    const acronyms = new Map(lines.map((line) => [line.split('\t')[0], line.split('\t').slice(1)]));
    for (const [acronym, expansions] of acronyms) {
      expect(acronym).toMatch(/^[a-z0-9]{2,8}$/);
      for (const expansion of expansions) expect(expansion).toMatch(/^\*?[a-z]{2,}( [a-z]{2,}){1,5}$/);
      // Only an acronym with one meaning is expanded when written.
      if (expansions.length > 1) expect(expansions.some((e) => e.startsWith('*'))).toBe(false);
    }
    expect(acronyms.get('cdn')).toEqual(['*content delivery network']);
    expect(acronyms.get('ftp')).toContain('file transfer protocol');
    for (const word of ['care', 'audit', 'did', 'are']) expect(acronyms.has(word)).toBe(false);
    expect(Acronyms.load(SHIPPED).spelledOut('the virtual private network is down').map((s) => s.acronym)).toContain('vpn');
  });

  it("ships software teams' own acronyms in the sense they mean them (scripts/data/software-acronyms.tsv)", () => {
    const table = Acronyms.load(SHIPPED);
    // Missing from V.E.R.A., or there only in other senses (PR as pattern recognition, SRE as a
    // self routing switch element, KPI as a kernel programming interface).
    expect(table.spelledOut('who reviewed the pull request for the retries').map((s) => s.acronym)).toEqual(['pr']);
    expect(table.spelledOut('our service level objective for checkout').map((s) => s.acronym)).toContain('slo');
    expect(table.related('who is the SRE on call').map((r) => r.word)).toEqual(['site', 'reliability', 'engineering']);
    expect(table.related('the KPI dashboard').map((r) => r.word)).toEqual(['key', 'performance', 'indicator']);
    // Acronyms that are also common words stay out, as V.E.R.A.'s do.
    for (const word of ['cd', 'dr', 'ai', 'eta']) expect(table.related(`the ${word.toUpperCase()} pipeline`)).toEqual([]);
  });

  it('lets the built-in embedder expand queries and match words by the acronyms, with its lexicon only', async () => {
    const embedder = new BuiltinEmbedder();
    try {
      expect(embedder.relatedWords('clear the content network')).toContainEqual({ word: 'cdn', weight: ACRONYM_WEIGHT * 2 });
      // Word by word, a text that writes the acronym matches the words that spelled it out.
      const [acronym, other] = await embedder.wordMatch('the old file transfer', ['the old FTP job', 'the old XYZ job']);
      expect((acronym as number) - (other as number)).toBeGreaterThan(0.2);
      const [plain] = await embedder.wordMatch('the old file', ['the old FTP job']);
      expect(plain).toBeLessThan(acronym as number);
    } finally {
      await embedder.close();
    }
    const previous = new BuiltinEmbedder({ lexicon: false });
    expect(previous.relatedWords('clear the content network')).toEqual([]);
    await previous.close();
  });
});
