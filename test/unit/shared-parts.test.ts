import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Entry } from '../../packages/server/src/domain/entry.ts';
import { openFsStore } from '../../packages/server/src/store/fs/index.ts';
import { HeadIndex } from '../../packages/server/src/store/s3/head-index.ts';
import { freezeHead } from '../../packages/server/src/store/shared-parts.ts';
import { makeEntry } from '../contract/store-contract.ts';

/** A head as a store reads it back: parsed from its JSON, every part an object of its own. */
const parsed = (overrides: Partial<Entry> = {}): Entry => JSON.parse(JSON.stringify(makeEntry(overrides))) as Entry;

describe('heads held in memory share their empty parts', () => {
  it('gives two heads the same empty tags, links, provenance and evidence, and changes nothing of their JSON', () => {
    const a = parsed({ key: 'a' });
    const b = parsed({ key: 'b' });
    const before = [JSON.stringify(a), JSON.stringify(b)];
    expect(a.tags).not.toBe(b.tags);
    freezeHead(a);
    freezeHead(b);
    expect([JSON.stringify(a), JSON.stringify(b)]).toEqual(before);
    for (const part of ['tags', 'links', 'provenance', 'evidence'] as const) expect(a[part]).toBe(b[part]);
    // Strings compare by value, so which copy a head holds cannot be asserted here: the
    // shared labels and created_at are measured by the heap instead (CHANGELOG).
    expect(a.written_at).toBe(a.created_at);
    expect(Object.isFrozen(a) && Object.isFrozen(a.tags) && Object.isFrozen(a.evidence)).toBe(true);
  });

  it('keeps parts that hold something, and leaves absent what an earlier release did not write', () => {
    const tagged = parsed({
      tags: ['ci'],
      links: [{ entity_path: 'x', key: 'y', relation: 'see_also' }],
      provenance: { source: 'github' },
      evidence: { successes: 1, failures: 0, status: 'validated' },
    });
    const copy = structuredClone(tagged);
    freezeHead(tagged);
    expect(tagged).toEqual(copy);
    const old = parsed() as Partial<Entry>;
    delete old.links;
    delete old.evidence;
    freezeHead(old as Entry);
    expect('links' in old || 'evidence' in old).toBe(false);
  });

  it('leaves a head that is frozen already as it is', () => {
    const head = Object.freeze(parsed());
    const tags = head.tags;
    expect(freezeHead(head)).toBe(head);
    expect(head.tags).toBe(tags);
  });

  describe('in the stores', () => {
    let dir: string;
    beforeEach(async () => {
      dir = await mkdtemp(join(tmpdir(), 'cairn-shared-parts-'));
    });
    afterEach(() => rm(dir, { recursive: true, force: true }));

    it('filesystem: heads written, replayed from the log and loaded from the checkpoint all share them', async () => {
      const open = () => openFsStore({ dir, logger: pino({ level: 'silent' }) });
      const store = await open();
      await store.append(parsed({ key: 'a' }), 0);
      await store.appendBatch([{ entry: parsed({ key: 'b' }), expectedHead: 0 }]);
      const written = [await store.head(makeEntry({ key: 'a' })), await store.head(makeEntry({ key: 'b' }))];
      expect(written[0]?.tags).toBe(written[1]?.tags);
      await store.close();
      // close() leaves a checkpoint: the second start loads it; the third replays the log.
      for (const fromCheckpoint of [true, false]) {
        const reopened = await open();
        const [a, b] = [await reopened.head(makeEntry({ key: 'a' })), await reopened.head(makeEntry({ key: 'b' }))];
        expect(a?.links, `from the checkpoint: ${fromCheckpoint}`).toBe(b?.links);
        expect(a?.evidence).toBe(b?.evidence);
        expect(a?.value).toEqual(written[0]?.value);
        await reopened.close();
        if (fromCheckpoint) await rm(join(dir, 'checkpoint'));
      }
    });

    it('S3: the replica\'s head index keeps them shared and frozen', () => {
      const heads = new HeadIndex();
      heads.apply(parsed({ key: 'a' }));
      heads.apply(parsed({ key: 'b' }));
      const [a, b] = [heads.get(makeEntry({ key: 'a' })), heads.get(makeEntry({ key: 'b' }))];
      expect(a?.provenance).toBe(b?.provenance);
      expect(Object.isFrozen(a)).toBe(true);
    });
  });
});
