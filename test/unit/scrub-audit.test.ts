import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { scrubAudit } from '../../packages/server/src/services/admin/scrub-audit.ts';
import { AuditLog, auditCollection } from '../../packages/server/src/services/audit-log.ts';
import type { Context } from '../../packages/server/src/services/context.ts';
import { type FsStore, openFsStore } from '../../packages/server/src/store/fs/index.ts';

const ctx: Context = { requestId: 'req-1', namespace: 'default', agentId: 'agent-a' };
const written = (entity_path: string, key: string, hash: string) => ({ action: 'entry.written', target: { entity_path, key }, changes: { version: 1, content_hash: hash, agent_id: 'a' } });

/** `path/key hash-or-none` of every stored event, oldest batch first. */
const events = async (store: FsStore): Promise<string[]> => {
  const records = await store.listRecords(auditCollection('default'), { limit: 1000 });
  return records.reverse().flatMap((r) => (r.data.events as { target: { entity_path: string; key: string }; changes: { content_hash?: string } }[]).map((e) => `${e.target.entity_path}/${e.target.key} ${e.changes.content_hash ?? 'none'}`));
};

describe('scrubbing forgotten entries\' content hashes from the audit log', () => {
  let dir: string;
  let store: FsStore;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'cairn-scrub-'));
    store = await openFsStore({ dir, logger: pino({ level: 'silent' }) });
  });
  afterEach(async () => {
    await store.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('takes out the hashes of the entries the target names, segment-wise, and no others, events kept', async () => {
    let now = Date.parse('2026-12-01T10:00:00Z');
    const audit = new AuditLog(store, () => now, 10);
    await audit.record(ctx, 'default', written('people/alice', 'note', 'h1'));
    await audit.record(ctx, 'default', written('people/alicex', 'note', 'h2'));
    await audit.drain();
    now += 10 * 60_000;
    // Still waiting for its batch when the scrub starts: stored first, then scrubbed.
    void audit.record(ctx, 'default', written('people/alice/deep', 'card', 'h3'));
    void audit.record(ctx, 'default', { action: 'entries.forgotten', target: { entity_path: 'people/bob' }, changes: { entries: 1 } }).catch(() => {});
    const deps = { store, audit };
    expect(await scrubAudit(deps, { namespace: 'default', prefix: 'people/alice' })).toBe(2);
    expect(await events(store)).toEqual(['people/alice/note none', 'people/alicex/note h2', 'people/alice/deep/card none', 'people/bob/undefined none']);
    // Nothing left to take: nothing rewritten.
    expect(await scrubAudit(deps, { namespace: 'default', prefix: 'people/alice' })).toBe(0);
  });

  it('reads only the batches stored since a time, when given one', async () => {
    let now = Date.parse('2026-12-01T10:00:00Z');
    const audit = new AuditLog(store, () => now, 10);
    await audit.record(ctx, 'default', written('a', 'old', 'h1'));
    await audit.drain();
    now += 10 * 60_000;
    await audit.record(ctx, 'default', written('a', 'new', 'h2'));
    await audit.drain();
    expect(await scrubAudit({ store, audit }, { namespace: 'default', prefix: 'a' }, now - 1_000)).toBe(1);
    expect(await events(store)).toEqual(['a/old h1', 'a/new none']);
  });
});
