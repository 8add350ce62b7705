import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { AuditLog, auditCollection } from '../../packages/server/src/services/audit-log.ts';
import type { Context } from '../../packages/server/src/services/context.ts';
import { type FsStore, openFsStore } from '../../packages/server/src/store/fs/index.ts';

const ctx: Context = { requestId: 'req-1', namespace: 'default', agentId: 'agent-a' };
const written = (key: string) => ({ action: 'entry.written', target: { entity_path: 'repos/acme', key } });

/** Every stored batch of a namespace, oldest first, as the keys its events name. */
const batches = async (store: FsStore, namespace = 'default'): Promise<string[][]> => {
  const records = await store.listRecords(auditCollection(namespace), { limit: 1000 });
  return records.reverse().map((r) => (r.data.events as { target: { key: string } }[]).map((e) => e.target.key));
};

describe('the audit log stores events in batches', () => {
  let dir: string;
  let store: FsStore;

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'cairn-audit-'));
    store = await openFsStore({ dir, logger: pino({ level: 'silent' }) });
  });
  afterEach(async () => {
    await store.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('stores text PostgreSQL refuses (U+0000, lone surrogates) as U+FFFD, so one event cannot sink its batch', async () => {
    const log = new AuditLog(store, Date.now, 20);
    await Promise.all([
      log.record(ctx, 'default', written('before')),
      log.record(ctx, 'default', { action: 'entries.forgotten', target: { entity_path: 'a\u0000b' }, changes: { reason: 'x\ud800y' } }),
      log.record(ctx, 'default', written('after')),
    ]);
    const [record] = await store.listRecords(auditCollection('default'), { limit: 10 });
    const events = record?.data.events as { target: { entity_path: string; key?: string }; changes?: { reason: string } }[];
    expect(events.map((e) => e.target.key ?? e.target.entity_path)).toEqual(['before', 'a\ufffdb', 'after']);
    expect(events[1]?.changes?.reason).toBe('x\ufffdy');
  });

  it('puts the events of one window into one record per namespace, in the order recorded', async () => {
    const audit = new AuditLog(store, Date.now, 50);
    const stored = [audit.record(ctx, 'default', written('a')), audit.record(ctx, 'other', written('b')), audit.record(ctx, 'default', written('c'))];
    // Nothing is stored until the window ends.
    expect(await batches(store)).toEqual([]);
    await Promise.all(stored);
    expect(await batches(store)).toEqual([['a', 'c']]);
    expect(await batches(store, 'other')).toEqual([['b']]);
  });

  it('stores at once on drain, without waiting out the window, and resolves the callers', async () => {
    const audit = new AuditLog(store, Date.now, 60_000);
    let resolved = false;
    const one = audit.record(ctx, 'default', written('a')).then(() => {
      resolved = true;
    });
    const started = Date.now();
    await audit.drain();
    await one;
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(resolved).toBe(true);
    expect(await batches(store)).toEqual([['a']]);
  });

  it('gives events recorded while a batch is being stored a record of their own, and drain waits for both', async () => {
    const audit = new AuditLog(store, Date.now, 60_000);
    const first = audit.record(ctx, 'default', written('a'));
    const draining = audit.drain();
    // The first batch is being stored now; this one arrives behind it.
    const second = audit.record(ctx, 'default', written('b'));
    await draining;
    await Promise.all([first, second]);
    expect(await batches(store)).toEqual([['a'], ['b']]);
  });

  it('rejects every caller of a batch the store refused, and is not left stuck', async () => {
    const audit = new AuditLog(store, Date.now, 1);
    await store.close();
    const refused = await Promise.allSettled([audit.record(ctx, 'default', written('a')), audit.record(ctx, 'default', written('b'))]);
    expect(refused.map((r) => r.status)).toEqual(['rejected', 'rejected']);
    await expect(audit.record(ctx, 'default', written('c'))).rejects.toThrow();
    await audit.drain();
    store = await openFsStore({ dir, logger: pino({ level: 'silent' }) });
    expect(await batches(store)).toEqual([]);
  });
});
