import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { recordId, recordsWithPrefix } from '../../packages/server/src/cortex/cortex-records.ts';
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
