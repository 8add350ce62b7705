import { mkdtemp, rm } from 'node:fs/promises';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type CairnProcess, spawnCairn } from '../helpers/spawn-cairn.ts';

/**
 * Event streams are bounded: at most CAIRN_MAX_STREAMS_PER_KEY per key (429) and
 * CAIRN_MAX_STREAMS in all (503), entry and Cortex streams counted together. Before, any
 * number could be opened (200 with one key), each able to hold 8 MiB for a stalled reader.
 * (The per-reader bound: test/unit/sse-buffer.test.ts.)
 */
const ADMIN = 'stream-caps-admin-key-0123456789';
let dir: string;
let cairn: CairnProcess;
const port = () => Number(new URL(cairn.url).port);

interface Raw {
  socket: net.Socket;
  status: Promise<number>;
  head: Promise<string>;
  closed: Promise<void>;
}

/** A stream opened on a raw socket, and its status line and first bytes. */
const open = (path: string, key: string): Raw => {
  const socket = net.connect(port(), '127.0.0.1');
  let buf = '';
  let gotHead: (head: string) => void = () => {};
  const head = new Promise<string>((resolve) => (gotHead = resolve));
  socket.on('connect', () => socket.write(`GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nx-cairn-api-key: ${key}\r\naccept: text/event-stream\r\n\r\n`));
  socket.on('data', (d) => {
    buf += d.toString('latin1');
    const end = buf.indexOf('\r\n\r\n');
    if (end >= 0) {
      gotHead(buf.slice(0, end + 4) + buf.slice(end + 4, end + 2000));
      if (buf.length > 100_000) buf = buf.slice(0, 10_000);
    }
  });
  socket.on('error', () => {});
  const closed = new Promise<void>((resolve) => socket.on('close', () => resolve()));
  return { socket, head, status: head.then((h) => Number(/^HTTP\/1\.1 (\d+)/.exec(h)?.[1])), closed };
};

const close = async (raw: Raw): Promise<void> => {
  raw.socket.destroy();
  await raw.closed;
  // The server hears the close on its next turn.
  await new Promise((resolve) => setTimeout(resolve, 100));
};

const post = (path: string, body: unknown, key = ADMIN) =>
  fetch(`${cairn.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-cairn-api-key': key }, body: JSON.stringify(body) });

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'cairn-stream-caps-'));
  cairn = await spawnCairn({ CAIRN_DATA_DIR: dir, CAIRN_API_KEYS: ADMIN, CAIRN_MAX_STREAMS_PER_KEY: '3', CAIRN_MAX_STREAMS: '5', CAIRN_RATE_LIMIT_RPM: '0' });
});

afterAll(async () => {
  await cairn?.stop();
  await rm(dir, { recursive: true, force: true });
});

describe('event stream caps', () => {
  it('refuses a key its streams past CAIRN_MAX_STREAMS_PER_KEY (429) and everyone past CAIRN_MAX_STREAMS (503), counting both kinds, until one closes', { timeout: 60_000 }, async () => {
    const issue = async (name: string) => ((await (await post('/api/v1/admin/keys', { name, scopes: ['read', 'write'] })).json()) as { key: string }).key;
    const a = await issue('a');
    const b = await issue('b');

    const mine = [open('/api/v1/stream', a), open('/api/v1/cortex/stream', a), open('/api/v1/stream?entity_path=x', a)];
    expect(await Promise.all(mine.map((s) => s.status))).toEqual([200, 200, 200]);
    for (const path of ['/api/v1/stream', '/api/v1/cortex/stream']) {
      const refused = open(path, a);
      const head = await refused.head;
      expect(head).toMatch(/^HTTP\/1\.1 429/);
      expect(head).toMatch(/retry-after: \d+/i);
      expect(head).toContain('CAIRN_MAX_STREAMS_PER_KEY');
      await close(refused);
    }
    // Another key still may, up to the server's cap (5 in all).
    const theirs = [open('/api/v1/stream', b), open('/api/v1/cortex/stream', b)];
    expect(await Promise.all(theirs.map((s) => s.status))).toEqual([200, 200]);
    const full = open('/api/v1/stream', b);
    const fullHead = await full.head;
    expect(fullHead).toMatch(/^HTTP\/1\.1 503/);
    expect(fullHead).toMatch(/retry-after: \d+/i);
    expect(fullHead).toContain('CAIRN_MAX_STREAMS');
    await close(full);

    // A stream closed gives its slot back.
    await close(mine[0] as Raw);
    const again = open('/api/v1/stream', a);
    expect(await again.status).toBe(200);
    expect(await open('/api/v1/stream', a).status).toBe(429);

    for (const s of [...mine.slice(1), ...theirs, again]) await close(s);
  });

  it('holds a static key, shared by whoever has it (a team\'s dashboards), to the server\'s cap alone', { timeout: 60_000 }, async () => {
    const shared = Array.from({ length: 5 }, (_, i) => open(i % 2 ? '/api/v1/cortex/stream' : '/api/v1/stream', ADMIN));
    expect(await Promise.all(shared.map((s) => s.status))).toEqual([200, 200, 200, 200, 200]);
    const full = open('/api/v1/stream', ADMIN);
    expect(await full.head).toMatch(/^HTTP\/1\.1 503/);
    for (const s of [...shared, full]) await close(s);
  });
});
