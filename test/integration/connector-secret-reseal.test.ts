import { expect, it } from 'vitest';
import { parseConfig } from '../../packages/server/src/config.ts';
import { connectorNamed } from '../../packages/server/src/connectors/registry.ts';
import type { RecordStore } from '../../packages/server/src/ports/records.ts';
import { connectorState, settingsCollection } from '../../packages/server/src/services/connector-state.ts';
import type { ServiceDeps } from '../../packages/server/src/services/context.ts';
import { secretBoxOf } from '../../packages/server/src/services/secrets/secret-keys.ts';
import { useFsStore } from '../helpers/fs-store.ts';

/**
 * After a CAIRN_SECRET_KEY rotation, the first reader of a connector's secret seals it again
 * with the new key. That write replaced the whole record: a secret rotation (or a disable)
 * landing on another replica between the reader's read and its write was undone — the old
 * secret verified again and the new one was refused. The re-seal now replaces the record only
 * while it is what the reader read.
 */
const OLD_KEY = 'old-secret-key-0123456789abcdef';
const NEW_KEY = 'new-secret-key-0123456789abcdef';
const fs = useFsStore('reseal');

const depsWith = (records: RecordStore, env: Record<string, string>) => ({ config: parseConfig(env), store: records }) as unknown as ServiceDeps;

type Change = (old: Record<string, unknown>, sealed: unknown) => Record<string, unknown>;
it.each<[string, Change, { enabled: boolean; secret: string | null }]>([
  ['a secret rotation', (old, sealed) => ({ ...old, secret: sealed }), { enabled: true, secret: 'new-signing-secret-0123' }],
  ['a disable', (old) => ({ ...old, enabled: false, secret: undefined }), { enabled: false, secret: null }],
])('never undoes %s that lands while the secret is sealed again', async (_, change, expected) => {
  const store = fs.store();
  const connector = connectorNamed('pagerduty');
  const collection = settingsCollection('default');
  const before = secretBoxOf(parseConfig({ CAIRN_SECRET_KEY: OLD_KEY }));
  const after = secretBoxOf(parseConfig({ CAIRN_SECRET_KEY: NEW_KEY, CAIRN_SECRET_KEY_PREVIOUS: OLD_KEY }));
  await store.putRecord(collection, connector.name, { enabled: true, secret: before?.seal('old-signing-secret-0123'), enabled_at: new Date().toISOString() });

  // Another replica's write lands just after the re-seal has read the record (its second read:
  // the first is the reader's own), before the re-seal writes.
  let reads = 0;
  const racing = new Proxy(store, {
    get(target, prop) {
      if (prop === 'getRecord') {
        return async (c: string, id: string) => {
          const read = await target.getRecord(c, id);
          if (c === collection && ++reads === 2 && read) await target.putRecord(c, id, JSON.parse(JSON.stringify(change(read.data, after?.seal('new-signing-secret-0123')))));
          return read;
        };
      }
      const value = Reflect.get(target, prop, target);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
  const env = { CAIRN_SECRET_KEY: NEW_KEY, CAIRN_SECRET_KEY_PREVIOUS: OLD_KEY };
  // The reader still verifies with what it read: the change came after its read.
  expect((await connectorState(depsWith(racing, env), 'default', connector)).secret).toBe('old-signing-secret-0123');
  expect(reads).toBe(2);
  const now = await connectorState(depsWith(store, env), 'default', connector);
  expect({ enabled: now.enabled, secret: now.secret }).toEqual(expected);
});
