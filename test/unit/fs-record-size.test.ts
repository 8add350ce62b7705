import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { afterAll, expect, it } from 'vitest';
import { ServiceError } from '../../packages/server/src/domain/errors.ts';
import { openFsStore } from '../../packages/server/src/store/fs/index.ts';
import { MAX_PAYLOAD, RecordTooLarge, encodeRecord } from '../../packages/server/src/store/fs/record-codec.ts';

/**
 * The filesystem's reader takes a record over MAX_PAYLOAD for corruption, so its writer must
 * never append one: a shared record that large is refused (PAYLOAD_TOO_LARGE), the log stays
 * whole, and the store opens again with every other record.
 */
const dir = await mkdtemp(join(tmpdir(), 'cairn-record-size-'));
afterAll(() => rm(dir, { recursive: true, force: true }));

it('refuses to encode a record its reader would refuse', () => {
  expect(() => encodeRecord({ big: 'x'.repeat(MAX_PAYLOAD) })).toThrow(RecordTooLarge);
  expect(encodeRecord({ small: 'x'.repeat(1000) }).length).toBeGreaterThan(1000);
});

it('refuses a shared record over the bound with PAYLOAD_TOO_LARGE, and keeps the log readable', async () => {
  let store = await openFsStore({ dir, logger: pino({ level: 'silent' }) });
  try {
    await store.putRecord('digests/default', 'a', { n: 1 });
    const error = await store.putRecord('digests/default', 'big', { text: 'x'.repeat(MAX_PAYLOAD + 10) }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ServiceError);
    expect((error as ServiceError).code).toBe('PAYLOAD_TOO_LARGE');
    expect((error as ServiceError).message).toContain('big');
    const replaced = await store.replaceRecord('digests/default', 'a', { n: 1 }, { text: 'x'.repeat(MAX_PAYLOAD + 10) }).catch((e: unknown) => e);
    expect((replaced as ServiceError).code).toBe('PAYLOAD_TOO_LARGE');
    expect(await store.getRecord('digests/default', 'big')).toBeNull();
    await store.putRecord('digests/default', 'b', { n: 2 });
  } finally {
    await store.close();
  }
  store = await openFsStore({ dir, logger: pino({ level: 'silent' }) });
  try {
    expect((await store.listRecords('digests/default', { limit: 10 })).map((r) => [r.id, r.data])).toEqual([['a', { n: 1 }], ['b', { n: 2 }]]);
  } finally {
    await store.close();
  }
});
