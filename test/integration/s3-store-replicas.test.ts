import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import type { Entry } from '../../packages/server/src/domain/entry.ts';
import { VersionConflict } from '../../packages/server/src/domain/errors.ts';
import type { Store } from '../../packages/server/src/ports/store.ts';
import { BucketObjects } from '../../packages/server/src/store/s3/bucket-objects.ts';
import { openS3Store } from '../../packages/server/src/store/s3/index.ts';
import { createS3Client } from '../../packages/server/src/store/s3/s3-client.ts';
import { makeEntry } from '../contract/store-contract.ts';
import { useS3ReplicaPair } from '../helpers/s3-replica-pair.ts';

const silent = pino({ level: 'silent' });
const addr = (e: Entry) => ({ namespace: e.namespace, entity_path: e.entity_path, key: e.key });

describe('S3 store: two replicas on one bucket', () => {
  const pair = useS3ReplicaPair('replicas/');

  it('shows a write on one replica in the other’s head, list and change feed within 2 s', async () => {
    const seen: Entry[] = [];
    const stop = pair.b.changes.subscribe((e) => {
      if (e.namespace === 'visible') seen.push(e);
    });
    const e = makeEntry({ namespace: 'visible', key: 'k1' });
    await pair.a.append(e, 0);
    // head() confirms against version objects, so it is current at once.
    expect(await pair.b.head(addr(e))).toEqual(e);
    await expect.poll(async () => (await pair.b.list({ namespace: 'visible', limit: 10, now: Date.now() })).entries, { timeout: 2000 }).toEqual([e]);
    await expect.poll(() => seen.length, { timeout: 2000 }).toBe(1);
    const v2 = makeEntry({ ...addr(e), version: 2, value: { second: true } });
    await pair.a.append(v2, 1);
    await expect.poll(() => seen.map((x) => x.version), { timeout: 2000 }).toEqual([1, 2]);
    stop();
    expect(seen[1]).toEqual(v2);
  });

  it('lets exactly one replica win each race for a version', async () => {
    const refusedBefore = pair.proxy.refused;
    for (let i = 0; i < 10; i++) {
      const base = { namespace: 'race', key: `k${i}` };
      const results = await Promise.allSettled([
        pair.a.append(makeEntry({ ...base, value: { by: 'a' } }), 0),
        pair.b.append(makeEntry({ ...base, value: { by: 'b' } }), 0),
      ]);
      expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
      const lost = results.find((r) => r.status === 'rejected');
      expect(lost?.reason).toBeInstanceOf(VersionConflict);
      expect((lost?.reason as VersionConflict).actual).toBe(1);
    }
    expect(pair.proxy.refused - refusedBefore).toBeGreaterThanOrEqual(10);
  });

  it('never loses a version when both replicas keep appending to one entry', async () => {
    const target = { namespace: 'counter', entity_path: 'repos/acme/api', key: 'count' };
    const seenOnA: number[] = [];
    const stop = pair.a.changes.subscribe((e) => {
      if (e.namespace === 'counter') seenOnA.push(e.version);
    });
    // Each worker does read-modify-write with retry on conflict, as a service would.
    const worker = async (store: Store, name: string, ops: number): Promise<number> => {
      let conflicts = 0;
      for (let op = 0; op < ops; op++) {
        for (;;) {
          const head = await store.head(target);
          const next = (head?.version ?? 0) + 1;
          try {
            await store.append(makeEntry({ ...target, version: next, value: { op: `${name}-${op}` } }), head?.version ?? 0);
            break;
          } catch (error) {
            if (!(error instanceof VersionConflict)) throw error;
            conflicts += 1;
          }
        }
      }
      return conflicts;
    };
    const refusedBefore = pair.proxy.refused;
    const conflicts = await Promise.all([worker(pair.a, 'a1', 12), worker(pair.a, 'a2', 12), worker(pair.b, 'b1', 12), worker(pair.b, 'b2', 12)]);
    expect(conflicts.reduce((x, y) => x + y, 0)).toBeGreaterThan(0);
    // Some of those conflicts were settled by the conditional put itself, not a stale check.
    expect(pair.proxy.refused).toBeGreaterThan(refusedBefore);
    const history = await pair.b.history(target, { limit: 1000 });
    expect(history.map((e) => e.version)).toEqual(Array.from({ length: 48 }, (_, i) => 48 - i));
    const ops = history.map((e) => (e.value as { op: string }).op);
    expect(new Set(ops).size).toBe(48);
    // Every version reaches A's feed exactly once, whoever wrote it.
    await expect.poll(() => seenOnA.length, { timeout: 3000 }).toBe(48);
    stop();
    expect([...seenOnA].sort((x, y) => x - y)).toEqual(Array.from({ length: 48 }, (_, i) => i + 1));
    expect((await pair.a.head(target))?.version).toBe(48);
  });

  it('lets exactly one replica say it removed a record both delete at once, and deletes a record replaced meanwhile', async () => {
    const ids = Array.from({ length: 8 }, (_, i) => `team-${i}`);
    for (const id of ids) expect(await pair.a.createRecord('teams/race', id, { id })).toBe(true);
    // Both replicas read every record before either deletes it: their DELETEs wait until all have asked.
    const release = pair.proxy.hold({ method: 'DELETE', pathIncludes: '/v1/records/' });
    const racing = ids.flatMap((id) => [pair.a, pair.b].map(async (store) => ({ id, removed: await store.deleteRecord('teams/race', id) })));
    await expect.poll(() => pair.proxy.held, { timeout: 5000 }).toBe(2 * ids.length);
    release();
    const answers = await Promise.all(racing);
    for (const id of ids) expect(answers.filter((a) => a.id === id && a.removed), id).toHaveLength(1);
    expect(await pair.b.listRecords('teams/race', { limit: 10 })).toEqual([]);

    // Replaced between a replica's read and its delete: it deletes what is there now.
    await pair.a.putRecord('teams/race', 'kept', { v: 1 });
    const hold = pair.proxy.hold({ method: 'DELETE', pathIncludes: '/v1/records/' });
    const deleting = pair.b.deleteRecord('teams/race', 'kept');
    await expect.poll(() => pair.proxy.held, { timeout: 5000 }).toBe(1);
    await pair.a.putRecord('teams/race', 'kept', { v: 2 });
    hold();
    expect(await deleting).toBe(true);
    expect(await pair.a.getRecord('teams/race', 'kept')).toBeNull();
  });

  it('deletes records unconditionally on a server that ignores If-Match on DELETE, and says so at start', async () => {
    // Each start's log, as the probe found the server: honouring If-Match on DELETE, then not.
    const startLog = async (): Promise<string> => {
      const lines: string[] = [];
      const logger = pino({ level: 'info' }, { write: (line: string) => void lines.push(line) });
      await (await openS3Store({ bucket: pair.s3.bucket, endpoint: pair.proxy.endpoint, prefix: 'replicas/', logger })).close();
      return lines.join('');
    };
    expect(await startLog()).not.toContain('If-Match on DELETE');
    pair.proxy.enforcingDeletes = false;
    try {
      expect(await startLog()).toContain('does not honour If-Match on DELETE');
      const store = await openS3Store({ bucket: pair.s3.bucket, endpoint: pair.proxy.endpoint, prefix: 'replicas/', logger: silent });
      try {
        await store.putRecord('teams/plain', 'x', { x: 1 });
        expect(await store.deleteRecord('teams/plain', 'x')).toBe(true);
        expect(await store.deleteRecord('teams/plain', 'x')).toBe(false);
        expect(await store.getRecord('teams/plain', 'x')).toBeNull();
      } finally {
        await store.close();
      }
    } finally {
      pair.proxy.enforcingDeletes = true;
    }
    // The start-up probes of every replica opened so far leave one object behind: the conditional put's.
    const objects = new BucketObjects(createS3Client({ region: 'us-east-1', endpoint: pair.proxy.endpoint }), pair.s3.bucket);
    const probes: string[] = [];
    for await (const page of objects.list('replicas/v1/probe/')) probes.push(...page);
    expect(probes).toEqual(['replicas/v1/probe/conditional-put']);
  });

  it('refuses to start on a server that ignores If-None-Match', async () => {
    const error = await openS3Store({ bucket: pair.s3.bucket, endpoint: pair.s3.endpoint, prefix: 'unsafe/', logger: silent }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(Error);
    expect((error as Error).message).toMatch(/ignores conditional writes/);
  });
});
