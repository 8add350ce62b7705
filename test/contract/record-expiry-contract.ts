import { describe, expect, it } from 'vitest';
import type { Store } from '../../packages/server/src/ports/store.ts';
import { AuditLog, auditCollection, auditId } from '../../packages/server/src/services/audit-log.ts';
import type { Context } from '../../packages/server/src/services/context.ts';
import { noteDedupCollection } from '../../packages/server/src/services/retention/dedup-collections.ts';
import { noteCollection } from '../../packages/server/src/services/retention/noted-collections.ts';
import { runRetention } from '../../packages/server/src/services/retention/run-retention.ts';

const DAY = 86_400_000;
let unique = 0;

/**
 * The retention pass's expiry of records kept beside the entries, over a real store: audit
 * batches past CAIRN_AUDIT_RETENTION_DAYS and dedup records past the dedup window go, the
 * rest stays, and an audit retention of 0 keeps everything.
 */
export const describeRecordExpiryContract = (store: () => Store): void => {
  describe('record expiry', () => {
    it('deletes audit batches stored before the retention and keeps the newer ones', async () => {
      const namespace = `expiry-${++unique}-${Date.now().toString(36)}`;
      const collection = auditCollection(namespace);
      const t0 = Date.now();
      let clock = t0 - 40 * DAY;
      const log = new AuditLog(store(), () => clock, 1);
      const ctx: Context = { requestId: 'r', namespace, agentId: 'a' };
      for (const [at, key] of [[t0 - 40 * DAY, 'old'], [t0 - 29 * DAY, 'kept'], [t0, 'new']] as const) {
        clock = at;
        await log.record(ctx, namespace, { action: 'entry.written', target: { key } });
        await log.drain();
      }
      // More old batches than one listing page, as a busy server leaves them.
      const old = Array.from({ length: 520 }, (_, i) => auditId(t0 - 31 * DAY - i * 1000));
      for (let i = 0; i < old.length; i += 40) {
        await Promise.all(old.slice(i, i + 40).map((id) => store().putRecord(collection, id, { events: [] })));
      }

      const keep = await runRetention(store(), t0, { dedupWindowMs: 14 * DAY, auditRetentionMs: 0 });
      expect(keep.audit_expired).toBe(0);
      expect(await store().listRecords(collection, { limit: 1000 })).toHaveLength(523);

      const pass = await runRetention(store(), t0, { dedupWindowMs: 14 * DAY, auditRetentionMs: 30 * DAY });
      expect(pass.audit_expired).toBeGreaterThanOrEqual(521);
      const left = await store().listRecords(collection, { limit: 1000 });
      expect(left.map((r) => (r.data.events as { target: { key: string } }[])[0]?.target.key)).toEqual(['new', 'kept']);
      // A second pass finds nothing more to expire here.
      await runRetention(store(), t0, { dedupWindowMs: 14 * DAY, auditRetentionMs: 30 * DAY });
      expect(await store().listRecords(collection, { limit: 1000 })).toHaveLength(2);
    });

    it('expires only the audit collections it was told of, and dedup records past their window', async () => {
      const namespace = `expiry-${++unique}-${Date.now().toString(36)}`;
      const noted = auditCollection(namespace);
      const unnoted = auditCollection(`${namespace}-unnoted`);
      const dedup = `dedup/${namespace}/github`;
      const longAgo = auditId(Date.now() - 100 * DAY);
      await noteCollection(store(), 'audit-collections', noted);
      await store().putRecord(noted, longAgo, { events: [] });
      await store().putRecord(unnoted, longAgo, { events: [] });
      await noteDedupCollection(store(), dedup);
      await store().createRecord(dedup, 'delivery-1', {});

      const soon = await runRetention(store(), Date.now() + DAY, { dedupWindowMs: 14 * DAY, auditRetentionMs: 30 * DAY });
      expect(await store().getRecord(noted, longAgo)).toBeNull();
      expect(await store().getRecord(unnoted, longAgo)).not.toBeNull();
      expect(await store().getRecord(dedup, 'delivery-1')).not.toBeNull();
      expect(soon.audit_expired).toBeGreaterThanOrEqual(1);

      const later = await runRetention(store(), Date.now() + 15 * DAY, { dedupWindowMs: 14 * DAY, auditRetentionMs: 0 });
      expect(later.dedup_expired).toBeGreaterThanOrEqual(1);
      expect(await store().getRecord(dedup, 'delivery-1')).toBeNull();
    });
  });
};
