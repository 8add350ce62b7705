import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { importArchive } from '../../packages/server/src/services/archive/import-archive.ts';
import { openFromEnv } from '../helpers/archive-fixture.ts';
import { type BackendEnv, filesystemBackend, postgresBackend, s3Backend } from '../helpers/backend-env.ts';
import { type Cairn, startCairn } from '../helpers/cairn.ts';

/**
 * An event replayed after an import is a duplicate, as it was on the source, even when forget
 * or retention had removed every version its source wrote. The export found a namespace's
 * event sources only from the writers of its versions (`external/<source>`), so such a
 * source's dedup records stayed behind: on the restored server the replay wrote again,
 * bringing a forgotten entry back or rolling an entry back to the event's old content.
 */
const backends: Array<[string, BackendEnv]> = [
  ['filesystem', filesystemBackend('archive-dedup')],
  ['postgres', postgresBackend('archive_dedup')],
  ['s3', s3Backend('archive-dedup')],
];
const dir = await mkdtemp(join(tmpdir(), 'cairn-archive-dedup-'));
const servers: Cairn[] = [];
afterAll(async () => {
  for (const server of servers) await server.close();
  for (const [, backend] of backends) await backend.cleanup();
  await rm(dir, { recursive: true, force: true });
});

const started = async (env: Record<string, string>): Promise<Cairn> => {
  const cairn = await startCairn(env);
  servers.push(cairn);
  return cairn;
};
const stop = async (cairn: Cairn): Promise<void> => {
  await cairn.close();
  servers.splice(servers.indexOf(cairn), 1);
};

/** Sent by "forgetful", whose only entry is then forgotten. */
const forgotten = { source: 'forgetful', entity_path: 'evt/forgotten', key: 'k', value: 'event secret zebra', event_type: 'alert', event_id: 'e-1' };
/** Sent by "pruned", whose version retention then drops behind a newer one written directly. */
const pruned = { source: 'pruned', entity_path: 'evt/pruned', key: 'k', value: { level: 'critical' }, event_type: 'alert', event_id: 'r-1' };

// The backends run at once: each has its own servers and store on its own service.
describe('event dedup records across an export and import', () => {
  for (const [name, backend] of backends) {
    it.concurrent(`carries the event ids of sources whose versions are all gone (${name})`, async ({ expect }) => {
      const source = await started(await backend.env());
      expect((await source.call('POST', '/api/v1/events', forgotten)).status).toBe(201);
      expect((await source.call('POST', '/api/v1/admin/forget', { entity_path: forgotten.entity_path })).status).toBe(200);
      expect((await source.call('POST', '/api/v1/events', pruned)).status).toBe(201);
      expect((await source.call('POST', '/api/v1/entries', { entity_path: pruned.entity_path, key: 'k', value: { level: 'resolved' }, agent_id: 'ops' })).body).toMatchObject({ entry: { version: 2 } });
      expect((await source.call('PUT', '/api/v1/admin/retention', { entity_path: pruned.entity_path, keep_versions: 1 })).status).toBe(200);
      expect((await source.call('POST', '/api/v1/admin/retention/run', {})).status).toBe(200);
      // On the source both replays write nothing.
      for (const event of [forgotten, pruned]) expect((await source.call('POST', '/api/v1/events', event)).body).toEqual({ status: 'duplicate', entry: null });

      const exported = await fetch(`${source.url}/api/v1/admin/export?all=true`);
      expect(exported.status).toBe(200);
      const archive = await exported.text();
      // An export of the one namespace carries them as well.
      const one = await (await fetch(`${source.url}/api/v1/admin/export?namespace=default`)).text();
      await stop(source);
      expect(one).toContain('"collection":"dedup/default/events/forgetful"');
      expect(one).toContain('"collection":"dedup/default/events/pruned"');
      expect(archive).toContain('"collection":"dedup/default/events/forgetful"');
      expect(archive).toContain('"collection":"dedup/default/events/pruned"');
      const file = join(dir, `${name}.jsonl`);
      await writeFile(file, archive);

      const targetEnv = await backend.env();
      const opened = await openFromEnv(targetEnv);
      try {
        await importArchive(opened.store, file);
      } finally {
        await opened.store.close();
      }
      const target = await started(targetEnv);
      // The forgotten entry is not brought back...
      const again = await target.call('POST', '/api/v1/events', forgotten);
      expect(again.status).toBe(200);
      expect(again.body).toEqual({ status: 'duplicate', entry: null });
      expect((await target.call('GET', '/api/v1/entries/evt/forgotten/k')).status).toBe(404);
      // ...nor the pruned one rolled back to the event's old content.
      const retried = await target.call('POST', '/api/v1/events', pruned);
      expect(retried.status).toBe(200);
      expect(retried.body).toEqual({ status: 'duplicate', entry: null });
      expect((await target.call('GET', '/api/v1/entries/evt/pruned/k')).body).toMatchObject({ version: 2, value: { level: 'resolved' } });
      expect((await target.call('GET', '/api/v1/history/evt/pruned/k')).body.versions).toHaveLength(1);

      // And the restored server's own export carries them on.
      const next = await (await fetch(`${target.url}/api/v1/admin/export?all=true`)).text();
      expect(next).toContain('"collection":"dedup/default/events/forgetful"');
      expect(next).toContain('"collection":"dedup/default/events/pruned"');
      await stop(target);
    }, 90_000);
  }
});
