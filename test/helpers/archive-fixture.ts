import { createWriteStream } from 'node:fs';
import { finished } from 'node:stream/promises';
import pino from 'pino';
import { contentHash } from '../../packages/server/src/domain/content-hash.ts';
import type { Entry, EntryAddress } from '../../packages/server/src/domain/entry.ts';
import { canonicalJson } from '../../packages/server/src/services/archive/import-archive.ts';
import { exportArchive } from '../../packages/server/src/services/archive/export-archive.ts';
import { parseConfig } from '../../packages/server/src/config.ts';
import type { OpenBackend } from '../../packages/server/src/ports/backend.ts';
import type { StoredRecord } from '../../packages/server/src/ports/records.ts';
import type { Store } from '../../packages/server/src/ports/store.ts';
import { openBackend } from '../../packages/server/src/store/backends.ts';

/** `cairn export` of the default namespace into `file`, its last byte written when this resolves. */
export const exportDefaultTo = async (store: Store, file: string, settleMs = 0): Promise<void> => {
  const out = createWriteStream(file);
  await exportArchive(store, out, { namespaces: ['default'], now: Date.now, settleMs });
  out.end();
  await finished(out);
};

/** A backend opened from the environment a BackendEnv gives, as `cairn import` opens one. */
export const openFromEnv = (env: Record<string, string>): Promise<OpenBackend> =>
  openBackend(parseConfig(env).storage, pino({ level: 'silent' }));

/**
 * Version `version` of the entry at `address`, as a write would have stored it around `at`:
 * each version written a second after the one before (`at` − 9 s for version 1), and created
 * when version 1 was written (an import refuses a history no write could have made).
 */
export const versionOf = (address: EntryAddress, version: number, fields: Partial<Entry> & { at: number }): Entry => {
  const value = fields.value ?? { v: version };
  const { at, ...rest } = fields;
  return {
    ...address, value, version, confidence: 0.5 + version / 100, agent_id: `agent-${version % 3}`, event_type: version === 1 ? 'created' : 'updated',
    memory_type: 'fact', shared: false, tags: [`t${version}`], provenance: { source: 'test', n: version }, content_hash: contentHash(value),
    created_at: new Date(at - 9000).toISOString(), written_at: new Date(at - (10 - version) * 1000).toISOString(),
    expires_at: null, deleted: false, evidence: { successes: 0, failures: 0, status: 'untested' }, links: [], ...rest,
  };
};

/** Entries written by ingest-event carry this writer; export finds the event source's dedup records by it. */
const EVENT_AGENT = 'external/ci';

/**
 * A store with what an archive must carry: histories, a tombstone, an expired entry, a batch,
 * an event-sourced entry, and keys, teams, connector settings (a secret), audit records and
 * dedup records, in two namespaces.
 */
export const fillStore = async (store: Store, namespaces: string[]): Promise<void> => {
  const at = Date.now() - 60_000;
  for (const namespace of namespaces) {
    const a = (entity_path: string, key: string): EntryAddress => ({ namespace, entity_path, key });
    for (let i = 0; i < 6; i++) {
      const address = a(`repos/acme/svc-${i % 3}`, `k${i}`);
      for (let v = 1; v <= 1 + (i % 4); v++) await store.append(versionOf(address, v, { at }), v - 1);
    }
    const gone = a('repos/acme/old', 'removed');
    await store.append(versionOf(gone, 1, { at }), 0);
    // As a delete writes it (delete-entry.ts): no value; an import refuses a deletion holding one.
    await store.append(versionOf(gone, 2, { at, deleted: true, value: '' }), 1);
    // Expired a second after it was written, and long before now.
    await store.append(versionOf(a('tmp', 'expired'), 1, { at, expires_at: new Date(at - 8000).toISOString() }), 0);
    await store.appendBatch([
      { entry: versionOf(a('batch', 'x'), 1, { at }), expectedHead: 0 },
      { entry: versionOf(a('batch', 'y'), 1, { at, links: [{ entity_path: 'batch', key: 'x', relation: 'relates_to' }] as Entry['links'] }), expectedHead: 0 },
    ]);
    await store.append(versionOf(a('events/ci', 'build-1'), 1, { at, agent_id: EVENT_AGENT, event_type: 'build' }), 0);
    // Retention kept the newest two of four versions: the history begins at version 3.
    const pruned = a('logs/app', 'pruned');
    for (let v = 1; v <= 4; v++) await store.append(versionOf(pruned, v, { at }), v - 1);
    if ((await store.dropVersionsBefore(pruned, 3)) !== 2) throw new Error('retention should have dropped versions 1 and 2');
    await store.putRecord('api-keys', `key-${namespace}`, { name: 'ci', namespace, scopes: ['write'], prefixes: null, team: null, hash: 'ab'.repeat(32), created_at: new Date(at).toISOString(), revoked_at: null });
    await store.putRecord(`teams/${namespace}`, 'platform', { name: 'platform', members: ['agent-1', 'agent-2'], created_at: '2026-01-01T00:00:00.000Z' });
    await store.putRecord(`connectors/${namespace}`, 'github', { enabled: true, secret: { alg: 'A256GCM', kid: 'k1', iv: 'AAAA', tag: 'BBBB', ct: 'c2VjcmV0' }, channels: ['C1'] });
    await store.putRecord(`audit/${namespace}`, `${at}-0001`, { events: [{ at: new Date(at).toISOString(), action: 'key.created', actor: { key_id: null, agent_id: 'admin' }, request_id: 'req-1', target: { id: `key-${namespace}` } }] });
    await store.putRecord(`dedup/${namespace}/github`, 'delivery-1', { entries: [], at: new Date(at).toISOString() });
    await store.putRecord(`dedup/${namespace}/events/ci`, 'evt-1', { version: 1, at: new Date(at).toISOString() });
  }
};

/** Versions of each of fillLongHistories' entries, and how many of the pruned one's retention dropped. */
export const LONG_HISTORY = { versions: 250, dropped: 30 };

/**
 * Two entries with histories longer than an export reads at once (export-history.ts), of
 * values large enough that a small line budget spreads each over many lines: one whole, one
 * whose oldest versions retention dropped. `size`: their versions and how many of the pruned
 * one's are dropped (LONG_HISTORY unless told another).
 */
export const fillLongHistories = async (store: Store, namespace: string, size: { versions: number; dropped: number } = LONG_HISTORY): Promise<void> => {
  const at = Date.now() - 60_000;
  for (const key of ['whole', 'pruned']) {
    const address = { namespace, entity_path: 'long/history', key };
    const items = Array.from({ length: size.versions }, (_, i) => {
      const value = { v: i + 1, text: `${key} ${i + 1} `.repeat(40) };
      return { entry: versionOf(address, i + 1, { at, value, confidence: 0.7, written_at: new Date(at + i).toISOString() }), expectedHead: i };
    });
    for (let i = 0; i < items.length; i += 50) await store.appendBatch(items.slice(i, i + 50));
    if (key === 'pruned' && (await store.dropVersionsBefore(address, size.dropped + 1)) !== size.dropped) throw new Error('retention should have dropped the oldest versions');
  }
};

const allRecords = async (store: Store, collection: string): Promise<StoredRecord[]> => store.listRecords(collection, { limit: 1000 });

/** Every entry's whole history and the fixture's records, as canonical text, for comparing stores. */
export const snapshotOf = async (store: Store, namespaces: string[]): Promise<Map<string, string>> => {
  const out = new Map<string, string>();
  for await (const head of store.scanHeads()) {
    if (!namespaces.includes(head.namespace)) continue;
    const history = await store.history(head, { limit: head.version });
    out.set(`entry ${head.namespace}/${head.entity_path}/${head.key}`, canonicalJson(history));
  }
  const collections = ['api-keys', ...namespaces.flatMap((ns) => [`teams/${ns}`, `connectors/${ns}`, `audit/${ns}`, `dedup/${ns}/github`, `dedup/${ns}/events/ci`])];
  for (const c of collections) {
    for (const r of await allRecords(store, c)) out.set(`record ${c}/${r.id}`, canonicalJson(r.data));
  }
  return out;
};
