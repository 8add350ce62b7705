import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { COLLECTIONS, recordId, recordsWithPrefix } from '../../packages/server/src/cortex/cortex-records.ts';
import { readDigests } from '../../packages/server/src/cortex/read-digests.ts';
import type { RecordStore } from '../../packages/server/src/ports/records.ts';
import { RecordObjects } from '../../packages/server/src/store/s3/record-objects.ts';
import { useFsStore } from '../helpers/fs-store.ts';
import { type StoreOnPostgres, startStoreOnPostgres } from '../helpers/postgres-store.ts';
import { useS3Bucket } from '../helpers/s3-bucket.ts';

/**
 * A range of record ids (a pattern kind and a path prefix, a digest kind) read on every
 * backend: the listing starts just below the range (justBefore: the highest code point after
 * the last one lowered) and stops at its end, with ids holding characters above U+FFFF, ids
 * long enough to be cut (recordId), and neighbours that share the prefix as a string.
 */
const PATHS = [
  'repos/acme/api',
  'repos/acme/api/sub',
  'repos/acme/api-gateway',
  'repos/acme/ap',
  'repos/acme/b\u{1F600}',
  'repos/acme/b\uE000',
  `repos/acme/${'long/'.repeat(60)}x`,
  `repos/acme/${'long/'.repeat(60)}y`,
  'repos/acmf',
  'incidents/x',
];
const IDS = PATHS.flatMap((p) => [`flapping_deploy:${p}:production`, `contested_key:${p}:k`, `recurring_incidents:${p}:svc`]);

const check = async (store: () => RecordStore): Promise<void> => {
  const collection = 'cortex/ns/patterns';
  for (const id of IDS) await store().putRecord(collection, recordId(id), { id });
  const range = async (prefix: string): Promise<string[]> => {
    const out: string[] = [];
    for await (const r of recordsWithPrefix(store(), collection, prefix)) out.push(r.data.id as string);
    return out.sort();
  };
  const expected = (prefix: string): string[] => IDS.filter((id) => id.startsWith(prefix) || recordId(id).startsWith(prefix.slice(0, 180))).sort();
  for (const prefix of ['flapping_deploy:repos/acme/api', 'contested_key:repos/acme/b\u{1F600}', 'contested_key:repos/acme/b\uE000', 'recurring_incidents:repos/acme/', `flapping_deploy:repos/acme/${'long/'.repeat(60)}`, 'contested_key:', 'flapping_deploy:repos/acme/zzz']) {
    expect(await range(prefix)).toEqual(expected(prefix));
  }
  expect(await range('flapping_deploy:repos/acme/api')).toHaveLength(3);
  expect(await range(`flapping_deploy:repos/acme/${'long/'.repeat(60)}`)).toHaveLength(2);
};

describe('ranges of record ids on every backend', () => {
  const fs = useFsStore('cortex-ranges');
  it('filesystem', async () => check(fs.store));

  let pg: StoreOnPostgres | undefined;
  beforeAll(async () => {
    pg = await startStoreOnPostgres(pino({ level: 'silent' }));
  }, 60_000);
  afterAll(async () => pg?.close());
  it('postgres', async () => check(() => (pg as StoreOnPostgres).store));

  const bucket = useS3Bucket();
  it('s3', async () => {
    const records = new RecordObjects(bucket.objects, 'ranges/');
    await check(() => records as unknown as RecordStore);
  });
});

describe('digests of a bare name, a page at a time', () => {
  const fs = useFsStore('cortex-digest-pages');
  it('pages past the name\'s source digest to every path digest under it', async () => {
    const records = fs.store();
    const collection = COLLECTIONS.digests('ns');
    const digest = (scope: string, kind: string, entity_path: string | null) => ({ scope, kind, type: kind === 'path' ? 'repos' : kind, entity_path });
    for (const d of [digest('source:external/github', 'source', null), digest('path:github', 'path', 'github'), digest('path:github/x', 'path', 'github/x'), digest('path:githubx', 'path', 'githubx')]) {
      await records.putRecord(collection, recordId(d.scope), d);
    }
    const whole = await readDigests(records, { namespace: 'ns', scope: 'github', limit: 10, visible: () => true });
    expect(whole.digests.map((d) => d.scope)).toEqual(['source:external/github', 'path:github', 'path:github/x']);
    for (const limit of [1, 2]) {
      const paged: string[] = [];
      let after: string | undefined;
      for (let page = 0; page < 10; page++) {
        const got = await readDigests(records, { namespace: 'ns', scope: 'github', limit, visible: () => true, ...(after === undefined ? {} : { after }) });
        paged.push(...got.digests.map((d) => d.scope));
        if (!got.more) break;
        after = got.last ?? undefined;
      }
      expect(paged, `limit ${limit}`).toEqual(whole.digests.map((d) => d.scope));
    }
  });
});
