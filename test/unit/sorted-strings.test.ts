import { describe, expect, it } from 'vitest';
import type { Entry } from '../../packages/server/src/domain/entry.ts';
import { compareCodePoints } from '../../packages/server/src/domain/order.ts';
import { HeadTree } from '../../packages/server/src/store/head-tree.ts';
import { SortedStrings } from '../../packages/server/src/store/sorted-strings.ts';

/** A deterministic generator, so a failure repeats. */
const randomFrom = (seed: number) => () => (seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) / 2 ** 32;

// Code point order differs from JavaScript's `<` above U+FFFF: '\u{1F600}' sorts after '\uFFFD'.
const ALPHABET = ['a', 'b', 'B', '0', '-', '/', 'é', '\uFFFD', '\u{1F600}'];

describe('SortedStrings', () => {
  it('reads back in code point order through any mix of adds, removes and reads', () => {
    const next = randomFrom(99);
    const set = new SortedStrings();
    const model = new Set<string>();
    for (let step = 0; step < 5000; step++) {
      const word = Array.from({ length: 1 + Math.floor(next() * 3) }, () => ALPHABET[Math.floor(next() * ALPHABET.length)]).join('');
      const roll = next();
      if (roll < 0.6 && !model.has(word)) {
        set.add(word);
        model.add(word);
      } else if (roll < 0.8 && model.has(word)) {
        set.remove(word);
        model.delete(word);
      } else if (roll >= 0.8) {
        expect(set.sorted()).toEqual([...model].sort(compareCodePoints));
      }
    }
    expect(set.sorted()).toEqual([...model].sort(compareCodePoints));
  });

  it('sorts strings given in any order when first read, after the adds and removes made before it', () => {
    const next = randomFrom(5);
    const words = [...new Set(Array.from({ length: 300 }, () => Array.from({ length: 1 + Math.floor(next() * 3) }, () => ALPHABET[Math.floor(next() * ALPHABET.length)]).join('')))];
    const set = SortedStrings.unsorted(words.slice(0, 200));
    const model = new Set(words.slice(0, 200));
    for (const word of words.slice(200)) {
      set.add(word);
      model.add(word);
    }
    for (const word of words.slice(0, 50)) {
      set.remove(word);
      model.delete(word);
    }
    expect(set.sorted()).toEqual([...model].sort(compareCodePoints));
  });

  it('never changes an array it handed out', () => {
    const set = SortedStrings.unsorted(['c', 'a', 'b']);
    const before = set.sorted();
    set.add('aa');
    set.remove('b');
    expect(before).toEqual(['a', 'b', 'c']);
    expect(set.sorted()).toEqual(['a', 'aa', 'c']);
  });
});

describe('HeadTree lists', () => {
  const entry = (entity_path: string, key: string): Entry => ({ namespace: 'ns', entity_path, key, links: [] }) as unknown as Entry;
  const addresses = (tree: HeadTree<Entry>, query: { prefix?: string; after?: { entity_path: string; key: string } } = {}) =>
    [...tree.walk({ namespace: 'ns', ...query })].map((e) => `${e.entity_path} ${e.key}`);

  it('walks paths and keys written after loading in order, with prefixes and cursors', () => {
    const tree = new HeadTree<Entry>((e) => e);
    for (const [p, k] of [['repos/b', 'k2'], ['repos/a', 'k1']]) tree.set({ namespace: 'ns', entity_path: p as string, key: k as string }, entry(p as string, k as string));
    tree.finishBulk();
    for (const [p, k] of [['repos/b', 'k1'], ['repos/a-x', 'k0'], ['repos/a', 'k3'], ['repos/a', 'k0'], ['other', 'z']]) tree.set({ namespace: 'ns', entity_path: p as string, key: k as string }, entry(p as string, k as string));
    expect(addresses(tree)).toEqual(['other z', 'repos/a k0', 'repos/a k1', 'repos/a k3', 'repos/a-x k0', 'repos/b k1', 'repos/b k2']);
    expect(addresses(tree, { prefix: 'repos/a' })).toEqual(['repos/a k0', 'repos/a k1', 'repos/a k3']);
    expect(addresses(tree, { after: { entity_path: 'repos/a', key: 'k1' } })).toEqual(['repos/a k3', 'repos/a-x k0', 'repos/b k1', 'repos/b k2']);
    tree.delete({ namespace: 'ns', entity_path: 'repos/a', key: 'k1' });
    tree.delete({ namespace: 'ns', entity_path: 'repos/a-x', key: 'k0' });
    expect(addresses(tree)).toEqual(['other z', 'repos/a k0', 'repos/a k3', 'repos/b k1', 'repos/b k2']);
  });

  it('leaves what was forgotten while loading out of the orders it builds once loaded', () => {
    const tree = new HeadTree<Entry>((e) => e);
    for (const [p, k] of [['a', 'k1'], ['a', 'k2'], ['b', 'k1']]) tree.set({ namespace: 'ns', entity_path: p as string, key: k as string }, entry(p as string, k as string));
    tree.delete({ namespace: 'ns', entity_path: 'a', key: 'k1' });
    tree.delete({ namespace: 'ns', entity_path: 'b', key: 'k1' });
    tree.set({ namespace: 'ns', entity_path: 'b', key: 'k0' }, entry('b', 'k0'));
    tree.finishBulk();
    expect(addresses(tree)).toEqual(['a k2', 'b k0']);
    tree.delete({ namespace: 'ns', entity_path: 'a', key: 'k2' });
    tree.set({ namespace: 'ns', entity_path: 'a', key: 'k3' }, entry('a', 'k3'));
    expect(addresses(tree)).toEqual(['a k3', 'b k0']);
  });

  it('keeps a walk going when entries are written and forgotten between its steps', () => {
    const tree = new HeadTree<Entry>((e) => e);
    tree.finishBulk();
    for (const k of ['k1', 'k3', 'k5']) tree.set({ namespace: 'ns', entity_path: 'p', key: k }, entry('p', k));
    const walk = tree.walk({ namespace: 'ns' });
    const seen = [walk.next().value?.key];
    tree.set({ namespace: 'ns', entity_path: 'p', key: 'k2' }, entry('p', 'k2'));
    tree.delete({ namespace: 'ns', entity_path: 'p', key: 'k3' });
    for (const e of walk) seen.push(e.key);
    // The order the walk began with, less what was forgotten meanwhile.
    expect(seen).toEqual(['k1', 'k5']);
  });
});
