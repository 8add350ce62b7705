import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { contentHash } from '../../packages/server/src/domain/content-hash.ts';
import type { Entry } from '../../packages/server/src/domain/entry.ts';
import { importArchive } from '../../packages/server/src/services/archive/import-archive.ts';
import { MAX_HEADER_CHARS } from '../../packages/server/src/services/archive/archive-lines.ts';
import { openFromEnv, snapshotOf } from '../helpers/archive-fixture.ts';
import { type Cairn, startCairn } from '../helpers/cairn.ts';
import { pullRequest, signDelivery } from '../helpers/provider-events.ts';
import { runCli } from '../helpers/run-cli.ts';

/**
 * An archive is a way into the store: one that is whole and carries a correct checksum may
 * still hold what no write could store (a hostile path, a value no backend keeps, a field a
 * reader trips over). Import refuses it before writing anything, naming the line and the field.
 */
const dir = await mkdtemp(join(tmpdir(), 'cairn-archive-refusals-'));
let header: string;
let entryLine: Record<string, any>;
let recordLine: Record<string, any>;
/** Every line of the source's export between header and trailer. */
let everyLine: object[];
let source: Cairn;

beforeAll(async () => {
  source = await startCairn({ CAIRN_DATA_DIR: join(dir, 'source') });
  for (const value of [{ title: 'first' }, { title: 'second' }]) {
    expect((await source.call('POST', '/api/v1/entries', { entity_path: 'repos/acme/api', key: 'pr-1', value, tags: ['a'] })).status).toBeLessThan(300);
  }
  const enabled = await source.call('POST', '/api/v1/connectors/github/enable', {});
  expect(enabled.status).toBe(200);
  // Records of every collection import checks the shape of, as the server writes them.
  const pull = pullRequest({ repo: 'acme/api', number: 7, opened: Date.now(), additions: 10, deletions: 2 }, 'opened', Date.now());
  for (const secret of [enabled.body.signing_secret as string, enabled.body.signing_secret as string, 'forged']) {
    await (await fetch(`${source.url}/api/v1/webhooks/github`, { method: 'POST', headers: signDelivery(pull, secret), body: pull.body })).arrayBuffer();
  }
  expect((await source.call('POST', '/api/v1/events', { source: 'ci', entity_path: 'repos/acme/api', key: 'build-1', value: 'green', event_type: 'build.passed', event_id: 'b-1' })).status).toBeLessThan(300);
  expect((await source.call('POST', '/api/v1/admin/teams', { name: 'platform', members: ['alice', 'triage-bot'] })).status).toBeLessThan(300);
  expect((await source.call('PUT', '/api/v1/admin/retention', { keep_days: 30 })).status).toBe(200);
  expect((await source.call('PUT', '/api/v1/admin/retention', { entity_path: 'repos/acme', keep_versions: 5 })).status).toBe(200);
  expect((await source.call('POST', '/api/v1/entries', { entity_path: 'repos/acme/api', key: 'judged', value: 'retry the deploy' })).status).toBeLessThan(300);
  for (let i = 0; i < 3; i++) {
    expect((await source.call('POST', '/api/v1/outcomes', { entries: [{ entity_path: 'repos/acme/api', key: 'judged' }], outcome: 'failure', weight: 1 })).status).toBe(200);
  }
  // Delivery counts reach the store about once a second.
  let lines: string[] = [];
  for (const deadline = Date.now() + 10_000; Date.now() < deadline; await new Promise((r) => setTimeout(r, 200))) {
    lines = (await (await fetch(`${source.url}/api/v1/admin/export?all=true`)).text()).trim().split('\n');
    if (lines.some((l) => l.includes('"collection":"connector-stats/default"'))) break;
  }
  everyLine = lines.slice(1, -1).map((l) => JSON.parse(l) as object);
  header = lines[0] as string;
  entryLine = JSON.parse(lines.find((l) => l.includes('"type":"entry"') && l.includes('"key":"pr-1"')) as string);
  recordLine = JSON.parse(lines.find((l) => l.includes('"collection":"connectors/')) as string);
});
afterAll(async () => {
  await source?.close();
  await rm(dir, { recursive: true, force: true });
});

/**
 * A whole archive of `lines` (after the header), with the trailer's counts and checksum right.
 * A line given as text is a record line, taken as it is (one too deep for JSON.stringify).
 */
const archive = (lines: (object | string)[]): string => {
  const body = [header, ...lines.map((l) => (typeof l === 'string' ? l : JSON.stringify(l)))].map((l) => `${l}\n`).join('');
  const count = (type: string) => lines.filter((l) => (typeof l === 'string' ? 'record' : (l as { type: string }).type) === type);
  const versions = count('entry').reduce((n, l) => n + (l as { versions: unknown[] }).versions.length, 0);
  const trailer = { type: 'end', entries: count('entry').length, versions, records: count('record').length, sha256: createHash('sha256').update(body).digest('hex') };
  return `${body}${JSON.stringify(trailer)}\n`;
};
/** The exported entry line with its first version changed by `patch`. */
const withFirst = (patch: Record<string, unknown>) => ({ ...entryLine, versions: entryLine.versions.map((v: object, i: number) => (i === 0 ? { ...v, ...patch } : v)) });
/** The exported entry line's versions numbered from `first` on, as a retention-pruned history is. */
const withVersionsFrom = (first: number) => ({ ...entryLine, versions: entryLine.versions.map((v: object, i: number) => ({ ...v, version: first + i })) });
/** The same, with the content hash following the new value, as a forger would keep it. */
const withValue = (value: unknown) => withFirst({ value, content_hash: contentHash(value) });
/** The exported entry line with its last version made a deletion, changed by `patch` (its content hash following its value). */
const deletedLast = (patch: Record<string, unknown>) => {
  const last = { ...entryLine.versions.at(-1), value: '', expires_at: null, deleted: true, ...patch };
  return { ...entryLine, versions: [...entryLine.versions.slice(0, -1), { ...last, content_hash: contentHash(last.value) }] };
};
/** A connector's delivery counts as the server flushes them (delivery-counters.ts), of connector `id`. */
const countsOf = (id: string) => ({ type: 'record', collection: 'connector-stats/default', id, updated_at: '2026-01-01T00:00:00.000Z', data: { received: 1, written: 1, duplicates: 0, ignored: 0, rejected: 0, last_event_at: '2026-01-01T00:00:00.000Z' } });
/** An API key record as create-key.ts stores it, changed by `patch`. */
const keyWith = (patch: Record<string, unknown>) => ({ type: 'record', collection: 'api-keys', id: 'abcdef012345', updated_at: '2026-01-01T00:00:00.000Z', data: { name: 'ci', scopes: ['read'], prefixes: null, namespace: 'default', team: null, hash: 'ab'.repeat(32), created_at: '2026-01-01T00:00:00.000Z', revoked_at: null, ...patch } });

let n = 0;
/** Imports `content` into a fresh data directory; answers the refusal and what the target holds after it. */
const tryImport = async (content: string | Buffer) => {
  const path = join(dir, `archive-${++n}`);
  await writeFile(path, content);
  const target = await openFromEnv({ CAIRN_DATA_DIR: join(dir, `target-${n}`) });
  try {
    const refusal = await importArchive(target.store, path).then(() => null, (error: Error) => error.message);
    const held = (await snapshotOf(target.store, ['default'])).size;
    const records = await target.store.getRecord(recordLine.collection, recordLine.id);
    return { refusal, held, records };
  } finally {
    await target.store.close();
  }
};

describe('cairn import refuses what no write could have stored', () => {
  it('imports the archive as exported', async () => {
    const imported = await tryImport(archive([entryLine, recordLine]));
    expect(imported).toMatchObject({ refusal: null, held: entryLine.versions.length });
    expect(imported.records?.data).toEqual(recordLine.data);
  });

  it('imports what the server writes that the refusals below stay clear of: a deletion, a memory type of the caller\'s own, a connector\'s counts', async () => {
    const typed = { ...entryLine, versions: entryLine.versions.map((v: object) => ({ ...v, key: 'typed', memory_type: 'runbook_step' })) };
    const imported = await tryImport(archive([deletedLast({}), typed, recordLine, countsOf('github')]));
    expect(imported.refusal).toBeNull();
  });

  it('imports a whole export with a team, retention policies, a judged entry, deliveries and an event', async () => {
    const collections = everyLine.map((l) => (l as { collection?: string }).collection);
    for (const c of ['teams/default', 'retention/policies', 'evidence/default', 'audit/default', 'connector-stats/default', 'delivery-log/default/github', 'dedup/default/github', 'dedup/default/events/ci']) {
      expect(collections).toContain(c);
    }
    expect((await tryImport(archive(everyLine))).refusal).toBeNull();
  });

  // After the record line, so each refusal is of line 3 or later.
  const refusals: [string, () => (object | string)[], RegExp][] = [
    ['tags that are not a list (every search then failed)', () => [withFirst({ tags: 'nope' })], /line 3: version 1: tags: .*expected array/],
    ['a hostile entity path', () => [withFirst({ entity_path: '../../etc' })], /entity_path: must not contain "\." or "\.\." segments/],
    ['an empty entity path', () => [withFirst({ entity_path: '' })], /entity_path: must not be empty/],
    ['a key holding U+0000', () => [withFirst({ key: 'a\u0000b' })], /key: must not contain control characters/],
    ['a value with a lone surrogate', () => [withValue({ text: 'bad \ud800' })], /value: must be valid Unicode/],
    ['a value nested past 64 levels', () => [withValue(JSON.parse(`${'{"a":'.repeat(100)}1${'}'.repeat(100)}`))], /value: must not nest deeper than 64 levels/],
    ['a value above 512 KiB', () => [withValue('x'.repeat(600 * 1024))], /value: must be at most 524288 bytes/],
    ['a time that is not one', () => [withFirst({ written_at: 'not a time' })], /written_at: expected an ISO 8601 time/],
    ['a history beginning at version 3,000,000,000 (PostgreSQL refused it half-way; the filesystem index grew to the version and never opened again)', () => [withVersionsFrom(3_000_000_000)], /line 3: version 1: version: is above 2147483647, the highest version every backend holds/],
    ['a history that passes version 2,147,483,647 (PostgreSQL\'s integer column)', () => [withVersionsFrom(2_147_483_647)], /line 3: version 2: version: is above 2147483647/],
    ['a time without milliseconds (PostgreSQL stored it as another text than the archive\'s: a second import refused)', () => [withFirst({ written_at: '2026-01-01T00:00:00Z' })], /line 3: version 1: written_at: expected an ISO 8601 time in UTC as Cairn writes them \(YYYY-MM-DDTHH:MM:SS\.sssZ/],
    ['a time with one decimal', () => [withFirst({ created_at: '2026-01-01T00:00:00.5Z' })], /line 3: version 1: created_at: expected an ISO 8601 time in UTC as Cairn writes them/],
    ['a time with microseconds', () => [withFirst({ written_at: '2026-01-01T00:00:01.123456Z' })], /line 3: version 1: written_at: expected an ISO 8601 time in UTC as Cairn writes them/],
    ['a time in year 0000 (PostgreSQL refused it half-way)', () => [withFirst({ written_at: '0000-01-01T00:00:00.000Z' })], /line 3: version 1: written_at: expected an ISO 8601 time in UTC as Cairn writes them/],
    ['a date that does not exist', () => [withFirst({ created_at: '2026-02-30T00:00:00.000Z' })], /line 3: version 1: created_at: expected an ISO 8601 time in UTC as Cairn writes them/],
    ['an expiry with an offset rather than Z', () => [withFirst({ expires_at: '2999-01-01T00:00:00.000+00:00' })], /line 3: version 1: expires_at: expected an ISO 8601 time in UTC as Cairn writes them/],
    ['a confidence that is not a number', () => [withFirst({ confidence: 'high' })], /confidence: .*expected number/],
    ['evidence of the wrong shape', () => [withFirst({ evidence: 7 })], /evidence: .*expected object/],
    ['evidence whose status does not follow from its counts', () => [withFirst({ evidence: { successes: 0, failures: 3, status: 'validated' } })], /evidence: the status does not follow/],
    ['links to a hostile path', () => [withFirst({ links: [{ entity_path: '..', key: 'k', relation: 'see_also' }] })], /links\.0\.entity_path/],
    ['a value whose content hash is not its own', () => [withFirst({ value: { title: 'forged' } })], /content_hash: does not match the value/],
    ['a field no entry has', () => [withFirst({ is_admin: true })], /Unrecognized key/],
    ['one entry on two lines', () => [entryLine, entryLine], /line 4: default \/ repos\/acme\/api \/ pr-1 already had a line of its own/],
    ['connector settings whose secret is not a secret (the connectors page then failed)', () => [{ ...recordLine, data: { enabled: 'yes', secret: 42 } }], /record connectors\/default \/ github: connector settings: enabled/],
    ['an API key whose hash is not one (signing in with it then failed with a 500)', () => [{ type: 'record', collection: 'api-keys', id: 'abcdef012345', updated_at: '2026-01-01T00:00:00.000Z', data: { name: 'ci', scopes: ['read'], prefixes: null, namespace: 'default', team: null, hash: 'zz', created_at: '2026-01-01T00:00:00.000Z', revoked_at: null } }], /record api-keys \/ abcdef012345: API key: hash: expected a SHA-256/],
    ['an API key with a scope that does not exist', () => [{ type: 'record', collection: 'api-keys', id: 'abcdef012345', updated_at: '2026-01-01T00:00:00.000Z', data: { name: 'ci', scopes: ['root'], prefixes: null, namespace: 'default', team: null, hash: 'ab'.repeat(32), created_at: '2026-01-01T00:00:00.000Z', revoked_at: null } }], /API key: scopes\.0/],
    ['a retention policy keeping no version (the API refuses fewer than 1; the retention pass would prune to the head)', () => [{ type: 'record', collection: 'retention/policies', id: 'default/', updated_at: '2026-01-01T00:00:00.000Z', data: { namespace: 'default', entity_path: null, keep_versions: 0, keep_days: null, updated_at: '2026-01-01T00:00:00.000Z' } }], /record retention\/policies \/ default\/: retention policy: keep_versions/],
    ['a retention policy under an id not its own (a put or delete of that id acts on another policy)', () => [{ type: 'record', collection: 'retention/policies', id: 'default/other', updated_at: '2026-01-01T00:00:00.000Z', data: { namespace: 'acme/b', entity_path: 'c', keep_versions: 1, keep_days: null, updated_at: '2026-01-01T00:00:00.000Z' } }], /record retention\/policies \/ default\/other: retention policy: id: must be acme%2Fb\/c/],
    ['a retention policy whose path is not a path', () => [{ type: 'record', collection: 'retention/policies', id: 'default/x', updated_at: '2026-01-01T00:00:00.000Z', data: { namespace: 'default', entity_path: 42, keep_versions: 3, keep_days: null, updated_at: '2026-01-01T00:00:00.000Z' } }], /retention policy: entity_path/],
    ['a team whose members are not a list', () => [{ type: 'record', collection: 'teams/default', id: 'platform', updated_at: '2026-01-01T00:00:00.000Z', data: { name: 'platform', members: 'alice', created_at: '2026-01-01T00:00:00.000Z' } }], /record teams\/default \/ platform: team: members/],
    ['an evidence pointer without a key', () => [{ type: 'record', collection: 'evidence/default', id: 'abc', updated_at: '2026-01-01T00:00:00.000Z', data: { entity_path: 'repos/acme' } }], /record evidence\/default \/ abc: evidence pointer: key/],
    ['audit events that are not a list (the audit listing answered the text\'s letters as events)', () => [{ type: 'record', collection: 'audit/default', id: 'x', updated_at: '2026-01-01T00:00:00.000Z', data: { events: 'many' } }], /record audit\/default \/ x: audit events: events/],
    ['delivery counts that are not numbers', () => [{ type: 'record', collection: 'connector-stats/default', id: 'github', updated_at: '2026-01-01T00:00:00.000Z', data: { received: '1', written: 0, duplicates: 0, ignored: 0, rejected: 0, last_event_at: null } }], /delivery counts: received/],
    ['a delivery log line with an outcome that does not exist (the deliveries page answered it as it was)', () => [{ type: 'record', collection: 'delivery-log/default/github', id: '000000000000001', updated_at: '2026-01-01T00:00:00.000Z', data: { at: '2026-01-01T00:00:00.000Z', event: null, delivery_id: null, outcome: 'exploded', status: 202, reason: null } }], /delivery log line: outcome/],
    ['a delivery seen whose entries are not a list', () => [{ type: 'record', collection: 'dedup/default/github', id: 'd1', updated_at: '2026-01-01T00:00:00.000Z', data: { entries: {}, at: '2026-01-01T00:00:00.000Z' } }], /record dedup\/default\/github \/ d1: delivery seen: entries/],
    ['a Cortex namespace no write could have made (the Cortex compiles every namespace its list names)', () => [{ type: 'record', collection: 'cortex/namespaces', id: 'n'.repeat(300), updated_at: '2026-01-01T00:00:00.000Z', data: { since: '2026-01-01T00:00:00.000Z' } }], /record cortex\/namespaces \/ n+: Cortex namespace: id: must be at most 128 characters/],
    ['a record nested 100,000 levels deep (it overflowed the stack while being written)', () => [`{"type":"record","collection":"connector-memory/default/github","id":"y","updated_at":"2026-01-01T00:00:00.000Z","data":${'{"a":'.repeat(100_000)}1${'}'.repeat(100_000)}}`], /data must not nest deeper than 64 levels/],
    ['records of a collection no export writes (the Cortex\'s traces: the traces and briefing endpoints then answered 500)', () => [{ type: 'record', collection: 'cortex/default/traces', id: 'x', updated_at: '2026-01-01T00:00:00.000Z', data: { since: 'no' } }], /record cortex\/default\/traces \/ x: collection is not one an export writes/],
    ['records of a connector that does not exist', () => [{ type: 'record', collection: 'delivery-log/default/nosuch', id: '000000000000001', updated_at: '2026-01-01T00:00:00.000Z', data: {} }], /collection is not one an export writes/],
    ['a version written after the archive\'s cut (the next export, cut by time, left it out)', () => [withFirst({ written_at: '9999-12-31T23:59:59.999Z' })], /written_at 9999-12-31T23:59:59\.999Z is after the archive's cut/],
    ['a deletion that still holds a value (a delete writes "")', () => [deletedLast({ value: { title: 'second' } })], /line 3: version 2: value: a deletion \(deleted: true\) holds no value/],
    ['a deletion with an expiry (a delete writes none)', () => [deletedLast({ expires_at: '2999-01-01T00:00:00.000Z' })], /line 3: version 2: expires_at: a deletion \(deleted: true\) has no expiry/],
    ['a memory type no write takes', () => [withFirst({ memory_type: 'Not A Type' })], /line 3: version 1: memory_type: expected a lower-case word/],
    ['delivery counts of a connector that does not exist', () => [countsOf('nosuch')], /line 3: record connector-stats\/default \/ nosuch: delivery counts: id: expected a connector's name: github, pagerduty, jira, slack/],
    ['connector settings of a connector that does not exist', () => [{ ...recordLine, id: 'nosuch' }], /line 3: record connectors\/default \/ nosuch: connector settings: id: expected a connector's name/],
    ['a record whose updated_at is not a time', () => [{ ...countsOf('github'), updated_at: 'yesterday' }], /line 3: record connector-stats\/default \/ github: updated_at: expected an ISO 8601 time in UTC/],
    ['a record without its updated_at', () => [{ ...countsOf('github'), updated_at: undefined }], /line 3: record connector-stats\/default \/ github: updated_at: expected an ISO 8601 time in UTC/],
    ['an API key revoked at a time that is not one (a revoked_at of "" let the key in again)', () => [keyWith({ revoked_at: '' })], /line 3: record api-keys \/ abcdef012345: API key: revoked_at: expected an ISO 8601 time in UTC/],
    ['an API key created at a time that is not one', () => [keyWith({ created_at: 'last week' })], /API key: created_at: expected an ISO 8601 time in UTC/],
    ['connector settings enabled at a time that is not one', () => [{ ...recordLine, data: { ...recordLine.data, enabled_at: 'noon' } }], /line 3: record connectors\/default \/ github: connector settings: enabled_at: expected an ISO 8601 time in UTC/],
    ['a record line with a field no record line has', () => [{ ...countsOf('github'), is_admin: true }], /line 3: record connector-stats\/default \/ github: Unrecognized key: "is_admin": a record line holds type, collection, id, data, updated_at only/],
  ];
  for (const [what, lines, message] of refusals) {
    it(`refuses ${what}, writing nothing`, async () => {
      const result = await tryImport(archive([recordLine, ...lines()]));
      expect(result.refusal).toMatch(message);
      expect(result.refusal).toMatch(/nothing was imported/);
      expect(result).toMatchObject({ held: 0, records: null });
    });
  }

  it('says so from `cairn import` (exit 1), creating nothing, for a record line no export writes', async () => {
    const path = join(dir, 'unknown-connector.jsonl');
    await writeFile(path, archive([entryLine, countsOf('nosuch')]));
    const target = join(dir, 'cli-target');
    const result = await runCli(['import', path], { CAIRN_DATA_DIR: target });
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/cannot import .*unknown-connector\.jsonl: line 3: record connector-stats\/default \/ nosuch: delivery counts: id: expected a connector's name.*\(nothing was imported\)/);
    expect(existsSync(target)).toBe(false);
  }, 30_000);

  it('refuses an archive the target holds another history of before writing anything, however late in the archive that entry comes', async () => {
    // Enough entries for several store batches before the one the target holds otherwise.
    const bulk = Array.from({ length: 300 }, (_, i) => ({ ...entryLine, versions: entryLine.versions.map((v: object) => ({ ...v, key: `bulk-${i}` })) }));
    const path = join(dir, `archive-${++n}`);
    await writeFile(path, archive([...bulk, recordLine]));
    const target = await openFromEnv({ CAIRN_DATA_DIR: join(dir, `target-${n}`) });
    try {
      const theirs = bulk[299]?.versions[0] as Entry;
      await target.store.append({ ...theirs, value: 'written on the target', content_hash: contentHash('written on the target') }, 0);
      await expect(importArchive(target.store, path)).rejects.toThrow(/already holds a different version 1 of default \/ repos\/acme\/api \/ bulk-299/);
      expect((await snapshotOf(target.store, ['default'])).size).toBe(1);
      expect(await target.store.getRecord(recordLine.collection, recordLine.id)).toBeNull();
    } finally {
      await target.store.close();
    }
  });

  it('imports again only what the target lacks: records it holds stay as they are (a connector disabled since the export stays disabled)', async () => {
    const path = join(dir, `archive-${++n}`);
    await writeFile(path, archive(everyLine));
    const target = await openFromEnv({ CAIRN_DATA_DIR: join(dir, `target-${n}`) });
    try {
      const first = await importArchive(target.store, path);
      expect(first.records).toBeGreaterThan(5);
      const changed = { ...recordLine.data, enabled: false };
      await target.store.putRecord(recordLine.collection, recordLine.id, changed);
      const again = await importArchive(target.store, path);
      expect(again).toMatchObject({ records: 0, records_present: first.records, versions_written: 0 });
      expect((await target.store.getRecord(recordLine.collection, recordLine.id))?.data).toEqual(changed);
    } finally {
      await target.store.close();
    }
  });

  it('says a damaged archive is damaged, before what its lines hold', async () => {
    const text = archive([withFirst({ tags: 'nope' })]);
    const result = await tryImport(text.replace('"first"', '"fir5t"'));
    expect(result.refusal).toMatch(/checksum does not match/);
  });

  it('refuses a gzip archive cut short or not gzip at all, as an error, not a crash', async () => {
    const gzipped = gzipSync(archive([entryLine, recordLine]));
    expect(await tryImport(gzipped)).toMatchObject({ refusal: null, held: entryLine.versions.length });
    const cut = await tryImport(gzipped.subarray(0, gzipped.length - 30));
    expect(cut.refusal).toMatch(/cannot read the archive|cut short|not a JSON object/);
    expect(cut.held).toBe(0);
    const garbage = await tryImport(Buffer.concat([Buffer.from([0x1f, 0x8b]), Buffer.from('not gzip at all, only its first two bytes')]));
    expect(garbage.refusal).toMatch(/cannot read the archive/);
    // A gzip stream that fails after its first line was refused: the failure must not go unheard.
    const manyHeaders = gzipSync(`{"format":"other"}\n${'x'.repeat(1 << 20)}\n`);
    const foreign = await tryImport(manyHeaders.subarray(0, manyHeaders.length - 10));
    expect(foreign.refusal).toMatch(/not a Cairn archive/);
    // A small gzip file of one long first line: refused past the header's limit, not read whole
    // (at the limit of every other line, up to half a billion characters) to find it is no header.
    const bomb = gzipSync(Buffer.alloc(64 << 20, 0x20));
    expect(bomb.length).toBeLessThan(128 << 10);
    expect(await tryImport(bomb)).toMatchObject({ refusal: `line 1 is longer than ${MAX_HEADER_CHARS} characters, the most an import reads (nothing was imported)`, held: 0 });
    await new Promise((resolve) => setTimeout(resolve, 100));
  });

  it('says an archive that ends inside a line was cut short in that line, and refuses a malformed last line as before', async () => {
    const whole = archive([entryLine, recordLine]);
    const [first, entry, record] = whole.split('\n');
    const upTo = (lines: number) => [first, entry, record].slice(0, lines).map((l) => `${l}\n`).join('');
    // Ended inside the record line, and inside the trailer.
    expect(await tryImport(`${upTo(2)}${record?.slice(0, 20)}`)).toMatchObject({ refusal: expect.stringMatching(/^the archive was cut short in line 3: /), held: 0 });
    expect((await tryImport(whole.slice(0, -10))).refusal).toMatch(/^the archive was cut short in line 4: /);
    // Ended at the end of a line, or a whole archive whose trailer lacks its "\n": as before.
    expect((await tryImport(upTo(3))).refusal).toMatch(/no trailer line: it was cut short after line 3/);
    expect((await tryImport(whole.slice(0, -1))).refusal).toBeNull();
    // A last line that ends with "\n" and does not parse is malformed, not cut; so is a lone first line.
    expect((await tryImport(`${upTo(3)}{"type":"end",\n`)).refusal).toBe('line 4 is not a JSON object');
    expect((await tryImport('not an archive')).refusal).toBe('line 1 is not a JSON object');
  });
});
