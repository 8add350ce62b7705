import { describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import { github } from '../../packages/server/src/connectors/github/index.ts';
import { forgetDocument, parseJsonBody, peekJson } from '../../packages/server/src/connectors/parse-json.ts';
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

  it('answers a body that is not UTF-8 with BAD_REQUEST, rather than storing U+FFFD for its bytes', () => {
    const body = Buffer.concat([Buffer.from('{"title":"bad '), Buffer.from([0xff, 0xfe]), Buffer.from(' bytes"}')]);
    expect(() => parseJsonBody(body, z.unknown())).toThrow(expect.objectContaining({ code: 'BAD_REQUEST', message: expect.stringContaining('not UTF-8') }));
    expect(peekJson(body)).toBeNull();
    // A character of several bytes is UTF-8.
    expect(parse('{"title":"caf\u00e9 ☕"}')).toEqual({ title: 'café ☕' });
    expect(parseJsonBody(Buffer.from('{"title":"café ☕"}'), z.unknown())).toEqual({ title: 'café ☕' });
  });

  it('parses a delivery body once for the peek, the mapping and the log, cleaned for every reader', () => {
    const body = Buffer.from(JSON.stringify({
      action: 'opened', number: 7,
      pull_request: { number: 7, title: 'Fix \ud800 parsing', state: 'open', user: { login: 'dana' } },
      repository: { name: 'api', owner: { login: 'acme' } },
    }));
    const delivery = { headers: { 'x-github-event': 'pull_request', 'x-github-delivery': 'once-1', 'content-type': 'application/json' }, body, now: Date.now() };
    const parse = vi.spyOn(JSON, 'parse');
    try {
      const outcome = github.handle(delivery, { channels: [], projects: {} });
      expect(github.peek(delivery)).toEqual({ event: 'pull_request.opened', deliveryId: 'once-1' });
      expect(peekJson(body)?.pull_request).toMatchObject({ title: 'Fix \uFFFD parsing' });
      expect(outcome).toMatchObject({ kind: 'writes', writes: [{ key: 'pr-7', value: { title: 'Fix \uFFFD parsing' } }] });
      expect(parse).toHaveBeenCalledTimes(1);
      // A body that is not JSON is tried once too, and refused by every reader.
      const broken = Buffer.from('{"action":');
      expect(peekJson(broken)).toBeNull();
      expect(() => parseJsonBody(broken, z.unknown())).toThrow(ServiceError);
      expect(parse).toHaveBeenCalledTimes(2);
    } finally {
      parse.mockRestore();
    }
  });

  it('drops a body\'s document once forgotten (its delivery mapped): a later reader parses it anew', () => {
    const body = Buffer.from('{"action":"opened","number":7}');
    const parse = vi.spyOn(JSON, 'parse');
    try {
      const first = peekJson(body);
      expect(peekJson(body)).toBe(first);
      forgetDocument(body);
      const again = peekJson(body);
      expect(again).not.toBe(first);
      expect(again).toEqual({ action: 'opened', number: 7 });
      expect(parse).toHaveBeenCalledTimes(2);
    } finally {
      parse.mockRestore();
    }
  });
});
