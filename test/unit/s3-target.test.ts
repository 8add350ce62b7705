import { describe, expect, it } from 'vitest';
import { s3Target } from '../../packages/server/src/store/s3/s3-http.ts';

/** Where Cairn's S3 client sends a request (store/s3/s3-http.ts). */
describe('S3 request addressing', () => {
  const at = (endpoint: string | null, bucket: string, key?: string) => {
    const { base, host, path } = s3Target(endpoint ? new URL(endpoint) : null, 'eu-west-1', bucket, key);
    return `${base.protocol}//${host}${path}`;
  };

  it('puts the bucket in the host name on AWS, and in the path for a name with dots', () => {
    expect(at(null, 'team-memory', 'cairn/v/ab.json')).toBe('https://team-memory.s3.eu-west-1.amazonaws.com/cairn/v/ab.json');
    expect(at(null, 'team-memory')).toBe('https://team-memory.s3.eu-west-1.amazonaws.com/');
    expect(at(null, 'memory.example.com', 'k')).toBe('https://s3.eu-west-1.amazonaws.com/memory.example.com/k');
  });

  it('addresses an endpoint of its own path-style, under its path, over its protocol', () => {
    expect(at('http://127.0.0.1:9000', 'b', 'k')).toBe('http://127.0.0.1:9000/b/k');
    expect(at('https://minio.internal/s3/', 'b', 'k')).toBe('https://minio.internal/s3/b/k');
    expect(at('http://127.0.0.1:9000/', 'b')).toBe('http://127.0.0.1:9000/b');
  });

  it('percent-encodes each segment of a key, keeping its slashes', () => {
    expect(at('http://h', 'b', "a b/ü+*(x)/it's~")).toBe("http://h/b/a%20b/%C3%BC%2B%2A%28x%29/it%27s~");
  });
});
