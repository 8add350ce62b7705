import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Entry } from '../../packages/server/src/domain/entry.ts';
import { ServiceError } from '../../packages/server/src/domain/errors.ts';
import type { Store } from '../../packages/server/src/ports/store.ts';
import { openS3Store } from '../../packages/server/src/store/s3/index.ts';
import { makeEntry } from '../contract/store-contract.ts';
import { type TestS3Behind, startS3Behind } from '../helpers/s3.ts';

interface LogLine {
  level: number;
  msg: string;
}

const capture = () => {
  const lines: LogLine[] = [];
  const logger = pino({ level: 'info' }, { write: (line: string) => void lines.push(JSON.parse(line) as LogLine) });
  return { lines, logger };
};

/** The rejection of `work`, and how long it took to arrive. */
const failure = async (work: Promise<unknown>): Promise<{ error: unknown; ms: number }> => {
  const started = Date.now();
  const error = await work.then(
    () => new Error('resolved while the object store was down'),
    (e: unknown) => e,
  );
  return { error, ms: Date.now() - started };
};

describe('S3 store: object store outage', () => {
  let s3: TestS3Behind;
  let a: Store;
  let b: Store;
  const logA = capture();

  beforeAll(async () => {
    s3 = await startS3Behind();
    const open = (logger: pino.Logger) =>
      openS3Store({ bucket: s3.bucket, endpoint: s3.proxy.endpoint, prefix: 'outage/', logger, pollIntervalMs: 200 });
    a = await open(logA.logger);
    b = await open(pino({ level: 'silent' }));
  });
  afterAll(async () => {
    await Promise.all([a?.close(), b?.close()]);
    await s3?.stop();
  });

  it('answers UNAVAILABLE quickly while down, logs once, and recovers when the server returns', async () => {
    const e1 = makeEntry({ namespace: 'o', key: 'before' });
    await a.append(e1, 0);
    const address = { namespace: 'o', entity_path: e1.entity_path, key: 'before' };

    await s3.stopServer();
    const calls = {
      ping: () => a.ping(),
      head: () => a.head(address),
      version: () => a.version(address, 2),
      history: () => a.history(address, { limit: 10 }),
      list: () => a.list({ namespace: 'o', limit: 10, now: Date.now() }),
      append: () => a.append(makeEntry({ ...address, version: 2 }), 1),
    };
    for (const [name, call] of Object.entries(calls)) {
      const { error, ms } = await failure(call());
      expect(error, name).toBeInstanceOf(ServiceError);
      expect((error as ServiceError).code, name).toBe('UNAVAILABLE');
      expect(ms, name).toBeLessThan(3000);
    }

    // Several polls fail while down; the outage is logged once, not per poll.
    await new Promise((resolve) => setTimeout(resolve, 2000));
    const warnings = logA.lines.filter((l) => l.msg.includes('unreachable'));
    expect(warnings).toHaveLength(1);

    await s3.startServer();
    await expect.poll(() => b.ping().then(() => true, () => false), { timeout: 5000 }).toBe(true);
    await expect.poll(() => a.ping().then(() => true, () => false), { timeout: 5000 }).toBe(true);

    // The poller resumed: a write on the other replica reaches A's feed and list.
    const seen: Entry[] = [];
    const stop = a.changes.subscribe((e) => {
      if (e.namespace === 'o') seen.push(e);
    });
    const e2 = makeEntry({ namespace: 'o', key: 'after' });
    await b.append(e2, 0);
    await expect.poll(() => seen, { timeout: 5000 }).toEqual([e2]);
    stop();
    expect((await a.list({ namespace: 'o', limit: 10, now: Date.now() })).entries.map((e) => e.key)).toEqual(['after', 'before']);
    expect(logA.lines.filter((l) => l.msg.includes('reachable again'))).toHaveLength(1);

    // Writes work again, including the one refused during the outage.
    await a.append(makeEntry({ ...address, version: 2 }), 1);
    expect((await b.head(address))?.version).toBe(2);
  });

  it('refuses to open while the object store is down', async () => {
    await s3.stopServer();
    try {
      const { error, ms } = await failure(
        openS3Store({ bucket: s3.bucket, endpoint: s3.proxy.endpoint, prefix: 'outage/', logger: pino({ level: 'silent' }) }),
      );
      expect((error as ServiceError).code).toBe('UNAVAILABLE');
      expect(ms).toBeLessThan(3000);
    } finally {
      await s3.startServer();
    }
  });
});
