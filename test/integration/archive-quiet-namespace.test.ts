import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { afterAll, expect, it } from 'vitest';
import type { Store } from '../../packages/server/src/ports/store.ts';
import { exportArchive } from '../../packages/server/src/services/archive/export-archive.ts';
import { importArchive } from '../../packages/server/src/services/archive/import-archive.ts';
import { AUDIT_COLLECTIONS, auditId } from '../../packages/server/src/services/audit-log.ts';
import { expireAudit } from '../../packages/server/src/services/retention/expire-audit.ts';
import { noteCollection } from '../../packages/server/src/services/retention/noted-collections.ts';
import { openFromEnv } from '../helpers/archive-fixture.ts';
import { filesystemBackend, postgresBackend } from '../helpers/backend-env.ts';

/**
 * A namespace may hold records and no entry (a connector enabled, a team made); an export of
 * every namespace finds such a namespace through its audit log's place in the list of audit
 * logs. Once its audit batches had expired, an archive carried its records but nothing that
 * put it on the target's list: the target's next export of every namespace left it out, a
 * backup of the restore without the namespace's connector settings and teams.
 */
const DAY = 86_400_000;
/** An export of every namespace, as archive text. */
const exportAll = async (store: Store): Promise<string> => {
  let text = '';
  const sink = new Writable({
    write(chunk, _encoding, done) {
      text += chunk;
      done();
    },
  });
  await exportArchive(store, sink, { namespaces: '*', now: Date.now, settleMs: 10 });
  return text;
};
/** The archive's records of namespace "quiet", as "collection id". */
const quietRecords = (archive: string): string[] =>
  archive.split('\n').filter(Boolean).map((l) => JSON.parse(l)).filter((l) => l.type === 'record' && String(l.collection).endsWith('/quiet')).map((l) => `${l.collection} ${l.id}`).sort();

for (const [name, backend] of [['filesystem', filesystemBackend('quiet')], ['postgres', postgresBackend('quiet')]] as const) {
  afterAll(() => backend.cleanup());

  it(`keeps a namespace of records and no entry through export, import and export again (${name})`, async () => {
    const dir = await mkdtemp(join(tmpdir(), 'cairn-quiet-'));
    const source = await openFromEnv(await backend.env());
    const target = await openFromEnv(await backend.env());
    try {
      const then = Date.now() - 3 * DAY;
      await source.store.putRecord('connectors/quiet', 'github', { enabled: true, secret: { alg: 'A256GCM', kid: 'k1', iv: 'AAAA', tag: 'BBBB', ct: 'c2VjcmV0' } });
      await source.store.putRecord('teams/quiet', 'platform', { name: 'platform', members: ['agent-1'], created_at: new Date(then).toISOString() });
      await source.store.putRecord('audit/quiet', auditId(then), { events: [{ at: new Date(then).toISOString(), action: 'connector.enabled', actor: { key_id: null, agent_id: 'admin' }, request_id: 'r1', target: { connector: 'github' } }] });
      await noteCollection(source.store, AUDIT_COLLECTIONS, 'audit/quiet');
      expect(await expireAudit(source.store, Date.now(), DAY)).toBeGreaterThan(0);
      const archive = await exportAll(source.store);
      expect(quietRecords(archive)).toEqual(['connectors/quiet github', 'teams/quiet platform']);

      const path = join(dir, 'quiet.jsonl');
      await writeFile(path, archive);
      await importArchive(target.store, path);
      expect(quietRecords(await exportAll(target.store))).toEqual(['connectors/quiet github', 'teams/quiet platform']);
    } finally {
      await source.store.close();
      await target.store.close();
      await rm(dir, { recursive: true, force: true });
    }
  }, 60_000);
}
