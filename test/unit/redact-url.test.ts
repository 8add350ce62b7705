import { describe, expect, it } from 'vitest';
import { redactUrl } from '../../packages/server/src/http/logger.ts';

describe('redactUrl: no key or secret reaches a log line', () => {
  it('redacts api_key, token and secret however the name is spelt on the wire', () => {
    const key = 'ck_0123456789abcdef';
    expect(redactUrl(`/api/v1/webhooks/github?api_key=${key}`)).toBe('/api/v1/webhooks/github?api_key=[redacted]');
    // Percent-encoded names, which the query parser decodes (and the webhook routes then accept).
    expect(redactUrl(`/api/v1/webhooks/github?api%5Fkey=${key}`)).toBe('/api/v1/webhooks/github?api_key=[redacted]');
    expect(redactUrl(`/api/v1/webhooks/github?%61pi_key=${key}&x=1`)).toBe('/api/v1/webhooks/github?api_key=[redacted]&x=1');
    // An encoded "=" puts the key into the name.
    expect(redactUrl(`/api/v1/webhooks/github?api_key%3D${key}`)).toBe('/api/v1/webhooks/github?api_key=[redacted]');
    expect(redactUrl(`/p?a=1&TOKEN=${key}&secret=s#frag`)).toBe('/p?a=1&TOKEN=[redacted]&secret=[redacted]#frag');
    for (const url of [redactUrl(`/x?api%5Fkey=${key}`), redactUrl(`/x?api_key%3D${key}`)]) expect(url).not.toContain(key);
  });

  it('redacts every parameter whose name holds key, token, secret, auth, password or signature, and a managed key anywhere', () => {
    const names = ['api_key[]', 'api_key%5B%5D', 'apikey', 'access_token', 'key', 'x-cairn-api-key', 'Authorization', 'password', 'X-Signature', 'tokens', 'api_keys'];
    for (const name of names) {
      const shown = decodeURIComponent(name);
      expect(redactUrl(`/api/v1/entries?${name}=hush&limit=5`), name).toBe(`/api/v1/entries?${shown}=[redacted]&limit=5`);
    }
    const managed = `ck_0123456789ab_${'Ab9_-'.repeat(8)}xyz`;
    expect(redactUrl(`/api/v1/entries/${managed}/k?entity_path=${managed}&x=${encodeURIComponent(managed).replace('_', '%5F')}`)).toBe(
      '/api/v1/entries/ck_0123456789ab_[redacted]/k?entity_path=ck_0123456789ab_[redacted]&x=ck%5F0123456789ab_[redacted]',
    );
  });

  it('redacts a secret parameter after a ";" too, and leaves an id that names a key (key_id)', () => {
    expect(redactUrl('/api/v1/webhooks/github?foo=bar;api_key=hush&x=1')).toBe('/api/v1/webhooks/github?foo=bar;api_key=[redacted]&x=1');
    expect(redactUrl('/api/v1/entries?entity_path=a;b&limit=2')).toBe('/api/v1/entries?entity_path=a;b&limit=2');
    expect(redactUrl('/api/v1/admin/audit?key_id=zzz&limit=5')).toBe('/api/v1/admin/audit?key_id=zzz&limit=5');
  });

  it('leaves other parameters, and URLs without a query, as they are', () => {
    expect(redactUrl('/api/v1/entries?entity_path=a%2Fb&limit=5')).toBe('/api/v1/entries?entity_path=a%2Fb&limit=5');
    expect(redactUrl('/api/v1/entries/a/%?api_key=k')).toBe('/api/v1/entries/a/%?api_key=[redacted]');
    expect(redactUrl('/health')).toBe('/health');
    expect(redactUrl('/p?limit=1&cursor=2&bad%zz=3')).toBe('/p?limit=1&cursor=2&bad%zz=3');
    expect(redactUrl(undefined)).toBeUndefined();
  });
});
