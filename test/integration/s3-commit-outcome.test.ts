import { type IncomingMessage, type ServerResponse, createServer, request } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CairnClient, CairnError } from '../../packages/client/src/index.ts';
import { type ConditionalProxy, startConditionalProxy } from '../helpers/s3-conditional-proxy.ts';
import { type TestS3, startS3 } from '../helpers/s3.ts';
import { type CairnProcess, spawnCairn } from '../helpers/spawn-cairn.ts';

/**
 * A write on S3 commits with one conditional PUT (a single write's version object). When that
 * PUT was sent and its answer never came (the bucket went dark right after), the write may be
 * stored: the server must answer 503 marked outcome unknown, without Retry-After, and the client
 * must not resend it (as on PostgreSQL: store/postgres/deadline.ts).
 */
/**
 * What the proxy does to the next PUTs whose path includes a given part, one action each:
 * `lose` forwards the PUT and never answers it; `drop` closes the connection without forwarding
 * it; `pass` forwards it as usual. `lose-dark` and `drop-dark` do as `lose` and `drop`, and then
 * the bucket goes dark: nothing more is forwarded, and what was held is dropped once healed.
 * `hold` keeps the PUT, unanswered, until a later `conflict`, which forwards the held PUT, then
 * answers its own 409 ConditionalRequestConflict (as S3 does while a conditional PUT to the same
 * key is in progress).
 */
type Action = 'lose' | 'drop' | 'pass' | 'lose-dark' | 'drop-dark' | 'hold' | 'conflict';

interface FaultProxy {
  endpoint: string;
  /** PUTs that reached the proxy, by the part of their path a script matched. */
  puts(part: string): number;
  script(part: string, actions: Action[]): void;
  heal(): void;
  close(): Promise<void>;
}

const startFaultProxy = async (upstream: string): Promise<FaultProxy> => {
  const target = new URL(upstream);
  const held: Socket[] = [];
  const sockets = new Set<Socket>();
  const counts = new Map<string, number>();
  let scripted: { part: string; actions: Action[] } | null = null;
  let dark = false;
  let onHold: (() => Promise<void>) | null = null;
  const forward = (req: IncomingMessage, res: ServerResponse, body: Buffer, answer = true): Promise<void> =>
    new Promise((done) => {
      const out = request({ host: target.hostname, port: target.port, method: req.method, path: req.url, headers: req.headers }, (up) => {
        up.on('end', () => done());
        if (!answer) return void up.resume();
        res.writeHead(up.statusCode ?? 502, up.headers);
        up.pipe(res);
      });
      out.on('error', () => {
        res.destroy();
        done();
      });
      out.end(body);
    });
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      const part = req.method === 'PUT' && scripted && (req.url ?? '').includes(scripted.part) ? scripted.part : null;
      if (part !== null) counts.set(part, (counts.get(part) ?? 0) + 1);
      if (dark) return void held.push(req.socket);
      const action = part === null ? 'pass' : (scripted?.actions.shift() ?? 'pass');
      if (action.endsWith('-dark')) dark = true;
      if (action === 'hold') onHold = () => forward(req, res, body, false);
      else if (action === 'conflict') {
        void (onHold ?? (() => Promise.resolve()))().then(() => {
          res.writeHead(409, { 'content-type': 'application/xml' });
          res.end('<?xml version="1.0" encoding="UTF-8"?><Error><Code>ConditionalRequestConflict</Code><Message>A conflicting conditional operation is in progress</Message></Error>');
        });
      } else if (action.startsWith('lose')) void forward(req, res, body, false);
      else if (action.startsWith('drop')) req.socket.destroy();
      else void forward(req, res, body);
    });
  });
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((ready) => server.listen(0, '127.0.0.1', ready));
  return {
    endpoint: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    puts: (part) => counts.get(part) ?? 0,
    script(part, actions) {
      scripted = { part, actions: [...actions] };
    },
    heal() {
      dark = false;
      scripted = null;
      for (const s of held.splice(0)) s.destroy();
    },
    close: () =>
      new Promise<void>((done) => {
        for (const s of sockets) s.destroy();
        server.close(() => done());
      }),
  };
};

describe('S3: a write whose commit PUT went unanswered answers "outcome unknown"', () => {
  let s3: TestS3;
  let conditional: ConditionalProxy;
  let faults: FaultProxy;
  let cairn: CairnProcess;
  let requests = 0;
  let client: CairnClient;

  beforeAll(async () => {
    s3 = await startS3();
    conditional = await startConditionalProxy(s3.endpoint);
    faults = await startFaultProxy(conditional.endpoint);
    cairn = await spawnCairn({
      CAIRN_OBJECT_BUCKET: s3.bucket,
      CAIRN_OBJECT_ENDPOINT: faults.endpoint,
      CAIRN_OBJECT_PREFIX: 'outcome/',
      AWS_ACCESS_KEY_ID: s3.accessKeyId,
      AWS_SECRET_ACCESS_KEY: s3.secretAccessKey,
    });
    const counting: typeof fetch = (input, init) => {
      requests += 1;
      return fetch(input, init);
    };
    client = new CairnClient({ url: cairn.url, fetch: counting, retryBaseMs: 50 });
  }, 30_000);

  afterAll(async () => {
    faults?.heal();
    await cairn?.stop();
    await faults?.close();
    await conditional?.close();
    await s3?.stop();
  });

  const ENTRIES = '/entries/';
  const BATCHES = '/batches/';
  const path = 'repos/outcome';
  const versionsOf = async (key: string) =>
    (await client.history({ entity_path: path, key, limit: 10 })).versions.map((v) => [v.version, v.value]);
  /** The client's answer to `call`, and how many requests it sent for it. */
  const attempt = async (call: () => Promise<unknown>) => {
    const before = requests;
    const answer = await call().then(
      (value) => ({ value, error: null }),
      (error: unknown) => ({ value: null, error: error as CairnError }),
    );
    return { ...answer, sent: requests - before };
  };
  const expectOutcomeUnknown = (error: CairnError | null) => {
    expect(error).toBeInstanceOf(CairnError);
    expect([error?.status, error?.outcomeUnknown, error?.retryAfter]).toEqual([503, true, undefined]);
    expect(error?.details).toEqual([{ field: 'outcome', message: 'unknown' }]);
  };

  it('a single write whose version PUT was stored, its answer lost, then the bucket dark: outcome unknown, not resent, stored once', async () => {
    faults.script(ENTRIES, ['lose-dark']);
    const { error, sent } = await attempt(() => client.write({ entity_path: path, key: 'stored', value: { n: 1 }, if_version: 0 }));
    const puts = faults.puts(ENTRIES);
    faults.heal();
    expectOutcomeUnknown(error);
    expect([sent, puts]).toEqual([1, 2]); // the SDK's own retry, held unanswered; no resend
    expect(await versionsOf('stored')).toEqual([[1, { n: 1 }]]);
  }, 20_000);

  it('a single write whose version PUT was dropped unforwarded, then the bucket dark: outcome unknown, not resent, not stored', async () => {
    faults.script(ENTRIES, ['drop-dark']);
    const { error, sent } = await attempt(() => client.write({ entity_path: path, key: 'dropped', value: { n: 1 }, if_version: 0 }));
    faults.heal();
    expectOutcomeUnknown(error);
    expect(sent).toBe(1);
    await expect(client.history({ entity_path: path, key: 'dropped', limit: 10 })).rejects.toMatchObject({ status: 404 });
  }, 20_000);

  it('a single write whose first PUT was held, then its retry met a 409 while the first landed: stored, its own write, not a conflict', async () => {
    faults.script(ENTRIES, ['hold', 'conflict']);
    const { error, sent } = await attempt(() => client.write({ entity_path: path, key: 'busy', value: { mine: true }, if_version: 0 }));
    faults.heal();
    expect(error).toBeNull();
    expect(sent).toBe(1);
    expect(await versionsOf('busy')).toEqual([[1, { mine: true }]]);
  }, 20_000);

  it('a batch whose commit marker was stored and both answers lost is settled by reading it back: 200, stored once', async () => {
    faults.script(BATCHES, ['lose', 'drop']);
    const entries = [1, 2].map((n) => ({ entity_path: path, key: `batch-a-${n}`, value: { n } }));
    const { error, sent } = await attempt(() => client.writeBatch({ entries }));
    const puts = faults.puts(BATCHES);
    faults.heal();
    expect(error).toBeNull();
    expect([sent, puts]).toEqual([1, 2]); // the commit and the SDK's retry; the read back finds the marker its own
    for (const { key, value } of entries) expect(await versionsOf(key)).toEqual([[1, value]]);
  }, 20_000);

  it('a batch whose commit marker never got through is settled by aborting it: a plain 503, resent, stored once', async () => {
    faults.script(BATCHES, ['drop', 'drop']);
    const entries = [1, 2].map((n) => ({ entity_path: path, key: `batch-b-${n}`, value: { n } }));
    const { error, sent } = await attempt(() => client.writeBatch({ entries }));
    faults.heal();
    expect(error).toBeNull();
    expect(sent).toBe(2); // the aborted batch is resent by the client, and the resend commits
    for (const { key, value } of entries) expect(await versionsOf(key)).toEqual([[1, value]]);
  }, 20_000);
});
