import { describe, expect, it } from 'vitest';
import { entityPathProblem, keyProblem, pathHasPrefix } from '../../packages/server/src/domain/names.ts';
import { compareAddresses, compareCodePoints } from '../../packages/server/src/domain/order.ts';
import { canonicalJson, contentHash } from '../../packages/server/src/domain/content-hash.ts';

describe('names, order and hashing', () => {
  it('accepts ordinary entity paths and refuses each broken rule', () => {
    for (const ok of ['repos/acme/api', 'a', 'incidents/pagerduty/Checkout Service', 'ünï/代码', Array(32).fill('s').join('/')]) {
      expect(entityPathProblem(ok), ok).toBeNull();
    }
    for (const bad of ['', '/a', 'a/', 'a//b', '.', 'a/../b', 'a/\u0007', 'a/\u202e'.replace('\u202e', '\u2028'), ' a', 'x'.repeat(513), Array(33).fill('s').join('/')]) {
      expect(entityPathProblem(bad), JSON.stringify(bad)).not.toBeNull();
    }
    expect(keyProblem('a/b c')).toBeNull();
    expect(keyProblem('\u0000')).not.toBeNull();
  });

  // Lengths are UTF-16 code units, as JavaScript counts (and PostgreSQL's index on the names
  // is sized for); the refusal said "256 characters" of 200 emoji, which was not true as said.
  it('counts lengths in UTF-16 code units and says so', () => {
    expect(keyProblem('😀'.repeat(128))).toBeNull();
    expect(keyProblem('😀'.repeat(129))).toBe('must be at most 256 characters (UTF-16 code units: an emoji counts as two)');
    expect(entityPathProblem(`a/${'😀'.repeat(65)}`)).toMatch(/^segments must be at most 128 characters \(UTF-16 code units/);
  });

  it('matches prefixes segment by segment', () => {
    expect(pathHasPrefix('repos/acme', 'repos/acme')).toBe(true);
    expect(pathHasPrefix('repos/acme/api', 'repos/acme')).toBe(true);
    expect(pathHasPrefix('repos/acme-corp', 'repos/acme')).toBe(false);
    expect(pathHasPrefix('repos/acm', 'repos/acme')).toBe(false);
  });

  it('orders by code point like PostgreSQL COLLATE "C"', () => {
    const sorted = ['\uE000', '𝒳', 'b', 'a', 'B'].sort(compareCodePoints);
    expect(sorted).toEqual(['B', 'a', 'b', '\uE000', '𝒳']);
    expect(['ab', 'a'].sort(compareCodePoints)).toEqual(['a', 'ab']);
  });

  it('orders whole addresses by namespace, then entity path, then key (the order PostgreSQL writers lock rows in)', () => {
    const a = (namespace: string, entity_path: string, key: string) => ({ namespace, entity_path, key });
    const sorted = [a('b', 'a', 'a'), a('a', 'b', 'a'), a('a', 'a', 'b'), a('a', 'a', '𝒳'), a('a', 'a', '\uE000')].sort(compareAddresses);
    expect(sorted).toEqual([a('a', 'a', 'b'), a('a', 'a', '\uE000'), a('a', 'a', '𝒳'), a('a', 'b', 'a'), a('b', 'a', 'a')]);
    expect(compareAddresses(a('x', 'y', 'z'), a('x', 'y', 'z'))).toBe(0);
  });

  it('hashes content independent of key order', () => {
    expect(canonicalJson({ b: 1, a: { d: [1, { y: 2, x: 1 }], c: null } })).toBe('{"a":{"c":null,"d":[1,{"x":1,"y":2}]},"b":1}');
    expect(contentHash({ a: 1, b: 2 })).toBe(contentHash({ b: 2, a: 1 }));
    expect(contentHash('1')).not.toBe(contentHash({ v: 1 }));
  });

  it('keeps the hashes already stored: the same text as JSON.stringify with sorted keys', () => {
    // Absent members are left out and absent array items are null, as JSON.stringify does.
    expect(canonicalJson({ z: undefined, b: { c: 'x' }, a: [1, undefined, 'é'] })).toBe('{"a":[1,null,"é"],"b":{"c":"x"}}');
    expect(canonicalJson({ 10: 1, 2: 2, '': 3, 'a"b': [] })).toBe('{"":3,"10":1,"2":2,"a\\"b":[]}');
    expect(contentHash({ b: { c: 'x' }, a: [1, null, 'é'] })).toBe('sha256:764bd88fe1369b512a95bcadc7f67552d4a7be643109a86b630a3be5d6745148');
  });
});
