import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { parseJsonBody } from '../../packages/server/src/connectors/parse-json.ts';
import { ServiceError } from '../../packages/server/src/domain/errors.ts';

const parse = (text: string): unknown => parseJsonBody(Buffer.from(text), z.unknown());

describe('provider JSON bodies', () => {
  it('keeps text no backend stores (U+0000, lone surrogates) as U+FFFD, in strings and keys', () => {
    expect(parse(JSON.stringify({ title: 'a\u0000b', ['k\u0000']: ['\ud800', { ok: 'pair 😀 kept' }] }))).toEqual({
      title: 'a\uFFFDb',
      'k\uFFFD': ['\uFFFD', { ok: 'pair 😀 kept' }],
    });
    // An escaped backslash before "u0000" is text, not a NUL.
    expect(parse(JSON.stringify({ path: 'C:\\u0000' }))).toEqual({ path: 'C:\\u0000' });
  });

  it('walks a document nested as deep as a body allows without overflowing the stack', () => {
    const depth = 100_000;
    let node = parse(`${'{"a":'.repeat(depth)}"\\u0000"${'}'.repeat(depth)}`) as { a: unknown };
    for (let i = 1; i < depth; i++) node = node.a as { a: unknown };
    expect(node.a).toBe('\uFFFD');
  });

  it('answers a body that is not JSON with BAD_REQUEST', () => {
    expect(() => parse('{"a":')).toThrow(ServiceError);
  });
});
