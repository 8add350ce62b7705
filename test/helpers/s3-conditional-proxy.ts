import { Agent, createServer, type IncomingHttpHeaders, type IncomingMessage, request, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface FaultMatch {
  method?: string;
  /** Substring of the request path (after the bucket), e.g. `/v1/changes/`. */
  pathIncludes: string;
}

export type FaultMode = 'error' | 'lost-reply';

export interface ConditionalProxy {
  endpoint: string;
  /** Answer 412 to `If-None-Match: *` PUTs of existing keys (on by default). */
  enforcing: boolean;
  /**
   * Delete or replace only on a matching `If-Match` ETag, else 412 (404 for a missing key), as
   * AWS S3 does (on by default); off, the header is ignored, as s3rver and some other servers do.
   */
  enforcingDeletes: boolean;
  /** Requests waiting on a hold right now. */
  held: number;
  /** PUTs refused with 412 so far. */
  refused: number;
  /** Faults injected so far. */
  injected: number;
  /**
   * Refuse a request for a key longer than this many bytes of UTF-8 (URL-decoded, without the
   * bucket) with 400 KeyTooLongError, as AWS S3 does at 1,024 (the default); s3rver takes any
   * length. null: no limit.
   */
  maxKeyBytes: number | null;
  /** Requests refused with KeyTooLongError so far. */
  keysTooLong: number;
  /**
   * While true, every new request is dropped unanswered, as by an unreachable endpoint;
   * requests already forwarded finish normally.
   */
  offline: boolean;
  /** Resolves once no forwarded request is in flight (use after setting `offline`). */
  settled(): Promise<void>;
  /**
   * Fail the next `count` matching requests: `error` answers an S3 500 without forwarding;
   * `lost-reply` forwards the request, then drops the connection instead of answering (the
   * server did the work, the client cannot know).
   */
  failNext(match: FaultMatch, count: number, mode?: FaultMode): void;
  /**
   * Hold every matching request, unanswered and not yet forwarded, until the returned function
   * is called (a slow endpoint, for as long as a test needs one); then they go on as usual.
   */
  hold(match: FaultMatch): () => void;
  clearFaults(): void;
  /** Called with every request's method and URL (path and query) as it arrives, when set: to count them. */
  onRequest: ((method: string, url: string) => void) | null;
  close(): Promise<void>;
}

interface Reply {
  status: number;
  headers: IncomingHttpHeaders;
  body: Buffer;
}

/** S3's 412 body, naming the header whose condition did not hold. */
const preconditionFailed = (condition: 'If-None-Match' | 'If-Match'): Buffer =>
  Buffer.from(
    '<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>PreconditionFailed</Code>' +
      `<Message>At least one of the pre-conditions you specified did not hold</Message><Condition>${condition}</Condition></Error>`,
  );
const NO_SUCH_KEY = Buffer.from(
  '<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>NoSuchKey</Code><Message>The specified key does not exist.</Message></Error>',
);
const KEY_TOO_LONG = Buffer.from(
  '<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>KeyTooLongError</Code><Message>Your key is too long</Message></Error>',
);
/** AWS S3's limit on a key, in bytes of UTF-8. */
const AWS_MAX_KEY_BYTES = 1024;

/** The object key of a path-style request path (`/<bucket>/<key>`), URL-decoded; null for the bucket itself. */
const keyOfPath = (path: string): string | null => {
  const slash = path.indexOf('/', 1);
  if (slash < 0 || slash === path.length - 1) return null;
  const raw = path.slice(slash + 1);
  try {
    return decodeURIComponent(raw);
  } catch {
    return raw;
  }
};
const INTERNAL_ERROR = Buffer.from(
  '<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>InternalError</Code><Message>injected fault</Message></Error>',
);

/**
 * Sent by the proxy with a conditional PUT while it is `enforcing`: s3rver-child.ts then refuses
 * it if the key exists, as S3 does. Without it, s3rver stores the object whatever is there, as
 * servers without conditional writes do (and as it does for a client that reaches it directly).
 */
export const ENFORCE_CONDITIONS = 'x-cairn-test-enforce-conditions';

/**
 * An HTTP proxy in front of s3rver that adds what s3rver lacks: `If-None-Match: *` on PUT and
 * `If-Match` on DELETE are enforced (writes are serialized per key; the server behind refuses
 * a conditional PUT of a key it holds, s3rver-child.ts; for an If-Match the proxy reads the
 * object, then forwards the request), so replicas racing for a version or a delete are really
 * tested. It refuses keys over 1,024 bytes, as AWS does (maxKeyBytes). It also injects faults. When s3rver is
 * down, client connections are dropped, as an unreachable server would do.
 */
export async function startConditionalProxy(upstream: string): Promise<ConditionalProxy> {
  const target = new URL(upstream);
  const agent = new Agent({ keepAlive: true, maxSockets: 128 });
  const locks = new Map<string, Promise<void>>();
  const faults: (FaultMatch & { remaining: number; mode: FaultMode })[] = [];
  const holds = new Set<FaultMatch & { released: Promise<void> }>();
  const matches = (f: FaultMatch, method: string, path: string) => (!f.method || f.method === method) && path.includes(f.pathIncludes);
  let inFlight = 0;
  let onSettled: (() => void)[] = [];

  const forward = (method: string, url: string, headers: IncomingHttpHeaders, body?: Buffer): Promise<Reply> =>
    new Promise((resolve, reject) => {
      const req = request({ host: target.hostname, port: target.port, method, path: url, headers, agent }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 502, headers: res.headers, body: Buffer.concat(chunks) }));
        res.on('error', reject);
      });
      req.on('error', reject);
      req.end(body);
    });

  // Runs `fn` after every earlier call for the same key has finished.
  const withKeyLock = async <T>(key: string, fn: () => Promise<T>): Promise<T> => {
    const before = locks.get(key) ?? Promise.resolve();
    let release = () => {};
    const mine = new Promise<void>((resolve) => (release = resolve));
    const chained = before.then(() => mine);
    locks.set(key, chained);
    await before;
    try {
      return await fn();
    } finally {
      release();
      if (locks.get(key) === chained) locks.delete(key);
    }
  };

  const proxy: ConditionalProxy = {
    endpoint: '',
    enforcing: true,
    enforcingDeletes: true,
    held: 0,
    refused: 0,
    injected: 0,
    maxKeyBytes: AWS_MAX_KEY_BYTES,
    keysTooLong: 0,
    offline: false,
    settled: () => (inFlight === 0 ? Promise.resolve() : new Promise((resolve) => onSettled.push(resolve))),
    failNext(match, count, mode = 'error') {
      faults.push({ ...match, remaining: count, mode });
    },
    hold(match) {
      let release = () => {};
      const entry = { ...match, released: new Promise<void>((resolve) => (release = resolve)) };
      holds.add(entry);
      return () => {
        holds.delete(entry);
        release();
      };
    },
    clearFaults() {
      faults.length = 0;
    },
    onRequest: null,
    close: () => new Promise((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
      agent.destroy();
    }),
  };

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const body = Buffer.concat(chunks);
    const url = req.url ?? '/';
    const path = url.split('?')[0] as string;
    const method = req.method ?? 'GET';
    proxy.onRequest?.(method, url);
    for (const held of holds) {
      if (!matches(held, method, path)) continue;
      proxy.held += 1;
      await held.released;
      proxy.held -= 1;
    }
    const key = keyOfPath(path);
    if (key !== null && proxy.maxKeyBytes !== null && Buffer.byteLength(key, 'utf8') > proxy.maxKeyBytes) {
      proxy.keysTooLong += 1;
      res.writeHead(400, { 'content-type': 'application/xml' }).end(method === 'HEAD' ? undefined : KEY_TOO_LONG);
      return;
    }
    const fault = faults.find((f) => f.remaining > 0 && matches(f, method, path));
    if (fault?.mode === 'error') {
      fault.remaining -= 1;
      proxy.injected += 1;
      res.writeHead(500, { 'content-type': 'application/xml' }).end(INTERNAL_ERROR);
      return;
    }
    const send = (reply: Reply) => {
      if (fault?.mode !== 'lost-reply') return void res.writeHead(reply.status, reply.headers).end(reply.body);
      fault.remaining -= 1;
      proxy.injected += 1;
      req.socket.destroy();
    };
    if (method === 'PUT' && req.headers['if-none-match'] === '*') {
      if (!proxy.enforcing) return send(await forward(method, url, req.headers, body));
      // The server behind refuses it if the key exists (s3rver-child.ts); this key's lock keeps
      // any other write of the key from landing between its look and the PUT.
      await withKeyLock(path, async () => {
        const reply = await forward(method, url, { ...req.headers, [ENFORCE_CONDITIONS]: '1' }, body);
        if (reply.status !== 412) return send(reply);
        proxy.refused += 1;
        res.writeHead(412, reply.headers).end(reply.body);
      });
      return;
    }
    const ifMatch = req.headers['if-match'];
    if ((method === 'DELETE' || method === 'PUT') && typeof ifMatch === 'string' && proxy.enforcingDeletes) {
      await withKeyLock(path, async () => {
        const existing = await forward('HEAD', path, { host: req.headers.host ?? target.host });
        if (existing.status === 404) return void res.writeHead(404, { 'content-type': 'application/xml' }).end(NO_SUCH_KEY);
        if (ifMatch !== '*' && existing.headers.etag !== ifMatch) {
          return void res.writeHead(412, { 'content-type': 'application/xml' }).end(preconditionFailed('If-Match'));
        }
        send(await forward(method, url, req.headers, body));
      });
      return;
    }
    // Other writes of a key wait for a conditional request on it, which reads and then acts.
    if ((method === 'PUT' || method === 'DELETE') && proxy.enforcing) {
      await withKeyLock(path, async () => send(await forward(method, url, req.headers, body)));
      return;
    }
    send(await forward(method, url, req.headers, body));
  };

  const server = createServer((req, res) => {
    if (proxy.offline) return void req.socket.destroy();
    inFlight += 1;
    handle(req, res)
      .catch(() => req.socket.destroy())
      .finally(() => {
        inFlight -= 1;
        if (inFlight > 0) return;
        const waiting = onSettled;
        onSettled = [];
        for (const resolve of waiting) resolve();
      });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  proxy.endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return proxy;
}
