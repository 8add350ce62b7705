import { type IncomingMessage, type ServerResponse, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { CairnClient, NetworkError } from '../../packages/client/src/index.ts';
import { startTcpProxy } from '../helpers/tcp-proxy.ts';

/**
 * `watch()` and a connection that goes silent (a partition, a NAT or load balancer dropping
 * the flow: no FIN, no RST), or a server that accepts and never answers: nothing fails on its
 * own, so only the client's idle timeout notices, closes it and reconnects.
 */
const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/**
 * A fake Cairn stream: each connection gets an entry event keyed `conn-<n>` at once, then a
 * keep-alive comment every 100 ms; `hang(n)` leaves connection n unanswered.
 */
const fakeStream = async (hang: (n: number) => boolean = () => false) => {
  let connections = 0;
  const server = createServer((_req: IncomingMessage, res: ServerResponse) => {
    const n = ++connections;
    if (hang(n)) return;
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.write(`event: entry\ndata: ${JSON.stringify({ entity_path: 'w', key: `conn-${n}`, version: 1 })}\n\n`);
    const keepAlive = setInterval(() => res.write(': keep-alive\n\n'), 100);
    res.on('close', () => clearInterval(keepAlive));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  cleanups.push(() => {
    server.closeAllConnections();
    server.close();
  });
  return { port: (server.address() as AddressInfo).port, connections: () => connections };
};

/** Collects the keys a watch yields until `until` says enough, or `ms` pass. */
const watchFor = async (client: CairnClient, options: Parameters<CairnClient['watch']>[0], until: (keys: string[]) => boolean, ms: number) => {
  const controller = new AbortController();
  const keys: string[] = [];
  let opens = 0;
  const timer = setTimeout(() => controller.abort(), ms);
  let failure: unknown;
  try {
    for await (const entry of client.watch({ ...options, signal: controller.signal, onOpen: () => opens++ })) {
      keys.push(entry.key);
      if (until(keys)) break;
    }
  } catch (error) {
    failure = error;
  } finally {
    clearTimeout(timer);
  }
  return { keys, opens, failure };
};

describe('client watch, when the connection goes silent', () => {
  it('reconnects once nothing, not even a keep-alive, has arrived for idleTimeoutMs', async () => {
    const fake = await fakeStream();
    const proxy = await startTcpProxy({ host: '127.0.0.1', port: fake.port });
    cleanups.push(() => proxy.stop());
    const client = new CairnClient({ url: `http://127.0.0.1:${proxy.port}` });
    const seen = await watchFor(
      client,
      { idleTimeoutMs: 600 },
      (keys) => {
        // The first connection goes silent as soon as it has carried its entry.
        if (keys.length === 1) expect(proxy.silence(/GET \/api\/v1\/stream/)).toBe(1);
        return keys.length === 2;
      },
      8000,
    );
    expect(seen).toMatchObject({ keys: ['conn-1', 'conn-2'], opens: 2, failure: undefined });
  }, 20_000);

  it('keeps a connection that carries only keep-alives, however long', async () => {
    const fake = await fakeStream();
    const client = new CairnClient({ url: `http://127.0.0.1:${fake.port}` });
    const seen = await watchFor(client, { idleTimeoutMs: 400 }, () => false, 2000);
    expect(seen).toMatchObject({ keys: ['conn-1'], opens: 1 });
    expect(fake.connections()).toBe(1);
  }, 20_000);

  it('fails with a NetworkError when it may not reconnect', async () => {
    const fake = await fakeStream();
    const proxy = await startTcpProxy({ host: '127.0.0.1', port: fake.port });
    cleanups.push(() => proxy.stop());
    const client = new CairnClient({ url: `http://127.0.0.1:${proxy.port}` });
    const seen = await watchFor(client, { idleTimeoutMs: 500, reconnect: false }, () => (proxy.silence(/stream/), false), 8000);
    expect(seen.keys).toEqual(['conn-1']);
    expect(seen.failure).toBeInstanceOf(NetworkError);
    expect((seen.failure as Error).message).toMatch(/nothing arrived on the event stream for 500 ms/);
  }, 20_000);

  it('bounds the wait for the stream\'s answer when connecting, and tries again', async () => {
    // The first connection is accepted and never answered.
    const fake = await fakeStream((n) => n === 1);
    const client = new CairnClient({ url: `http://127.0.0.1:${fake.port}` });
    const seen = await watchFor(client, { idleTimeoutMs: 500 }, (keys) => keys.length === 1, 8000);
    expect(seen).toMatchObject({ keys: ['conn-2'], opens: 1, failure: undefined });
  }, 20_000);
});
