import type { FastifyRequest } from 'fastify';
import { describe, expect, it } from 'vitest';
import { addressFromUrl } from '../../packages/server/src/http/entry-url.ts';

const PREFIX = '/api/v1/entries/';
const at = (url: string) => addressFromUrl({ raw: { url } } as FastifyRequest, PREFIX);

describe('the address in an entry URL', () => {
  it('splits at the last "/", the key being the last segment', () => {
    expect(at('/api/v1/entries/repos/acme/api/pr-42')).toEqual({ entity_path: 'repos/acme/api', key: 'pr-42' });
    expect(at('/api/v1/entries/a/k?version=2&namespace=x')).toEqual({ entity_path: 'a', key: 'k' });
    expect(at('/api/v1/entries/a/')).toEqual({ entity_path: 'a', key: '' });
  });

  it('decodes segment by segment, so an encoded "/" stays inside the key', () => {
    expect(at('/api/v1/entries/repos/acme/a%2Fb%2Fc')).toEqual({ entity_path: 'repos/acme', key: 'a/b/c' });
    expect(at('/api/v1/entries/r%C3%A9pos/x/emoji-%F0%9F%AA%A8')).toEqual({ entity_path: 'répos/x', key: 'emoji-🪨' });
    expect(at('/api/v1/entries/a/%252F-literal')).toEqual({ entity_path: 'a', key: '%2F-literal' });
  });

  it('gives the same address with and without encoding of characters that need none', () => {
    for (const [plain, encoded] of [['a/b/c/key', 'a/b/%63/k%65y'], ['x.y/_-~', 'x%2Ey/%5F-~']] as const) {
      expect(at(PREFIX + plain)).toEqual(at(PREFIX + encoded));
    }
  });

  it('takes the path of an absolute-form target, without its scheme and host', () => {
    expect(at('http://127.0.0.1:7911/api/v1/entries/probe/q/k')).toEqual({ entity_path: 'probe/q', key: 'k' });
    expect(at('HTTPS://a/api/v1/entries/one/two/k?version=1')).toEqual({ entity_path: 'one/two', key: 'k' });
    expect(at('http://user@host:1/api/v1/entries/a/b%2Fc')).toEqual({ entity_path: 'a', key: 'b/c' });
  });

  it('skips the prefix by its segments, which the router also matches percent-encoded', () => {
    expect(at('/api/v1/%65ntries/repos/acme/k')).toEqual({ entity_path: 'repos/acme', key: 'k' });
  });

  it('refuses a URL without a key segment, and a malformed encoding', () => {
    expect(() => at('/api/v1/entries/only')).toThrow(/expected/);
    expect(() => at('/api/v1/entries/a/%zz')).toThrow(/malformed/);
    expect(() => at('/api/v1/entries/a/%E0%A4%A')).toThrow(/malformed/);
  });
});
