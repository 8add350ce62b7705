import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { contentHash } from '../../packages/server/src/domain/content-hash.ts';
import type { Entry } from '../../packages/server/src/domain/entry.ts';
import { importArchive } from '../../packages/server/src/services/archive/import-archive.ts';
import { openFromEnv, snapshotOf } from '../helpers/archive-fixture.ts';
import { type Cairn, startCairn } from '../helpers/cairn.ts';
import { runCli } from '../helpers/run-cli.ts';

/**
 * An archive whose checksum is right may still hold a history no sequence of writes makes:
 * times out of order (an `as_of` read then answered a version "created" years later, and
 * `since` left the entry out), an expiry before its own write, a cut in the future, entries
 * of a namespace the header does not list, one record twice. Import refuses it before
 * writing anything, naming the line and what is wrong; what the server's own writes make
 * (a delete and a rewrite, an expiry and a rewrite, both starting the entry anew) still imports.
 */
const dir = await mkdtemp(join(tmpdir(), 'cairn-archive-impossible-'));
let source: Cairn;
let header: Record<string, unknown>;
/** Every line of the source's export of `default` between header and trailer. */
let everyLine: Record<string, any>[];
/** The exported entry line of repos/acme/api / pr-1: two versions. */
let pr1: { type: string; versions: Entry[] };
let teamLine: Record<string, any>;

beforeAll(async () => {
  source = await startCairn({ CAIRN_DATA_DIR: join(dir, 'source') });
  const write = async (key: string, value: unknown, extra: object = {}) =>
    expect((await source.call('POST', '/api/v1/entries', { entity_path: 'repos/acme/api', key, value, ...extra })).status).toBeLessThan(300);
  await write('pr-1', { title: 'first' });
  await write('pr-1', { title: 'second' });
  // Written, deleted, written again: the rewrite starts the entry anew (a created_at of its own).
  await write('gone', 'one');
  expect((await source.call('DELETE', '/api/v1/entries/repos/acme/api/gone')).status).toBeLessThan(300);
  await write('gone', 'two');
  // Expired, then written again: the same.
  await write('brief', 'one', { ttl_seconds: 1 });
  // An outcome keeps the expiry: its version may expire less than ttl_seconds' least (1 s) after it.
  await write('judged', 'retry', { ttl_seconds: 1 });
  expect((await source.call('POST', '/api/v1/outcomes', { entries: [{ entity_path: 'repos/acme/api', key: 'judged' }], outcome: 'success', weight: 1 })).status).toBe(200);
  await new Promise((resolve) => setTimeout(resolve, 1_100));
  await write('brief', 'two', { ttl_seconds: 60 });
  expect((await source.call('POST', '/api/v1/admin/teams', { name: 'platform', members: ['alice'] })).status).toBeLessThan(300);
  expect((await source.call('PUT', '/api/v1/admin/retention', { entity_path: 'repos/acme', keep_versions: 5 })).status).toBe(200);
  const lines = (await (await fetch(`${source.url}/api/v1/admin/export?namespace=default`)).text()).trim().split('\n');
  header = JSON.parse(lines[0] as string);
  everyLine = lines.slice(1, -1).map((l) => JSON.parse(l));
  pr1 = everyLine.find((l) => l.type === 'entry' && l.versions[0].key === 'pr-1') as typeof pr1;
  teamLine = everyLine.find((l) => l.collection === 'teams/default') as Record<string, any>;
});
afterAll(async () => {
  await source?.close();
  await rm(dir, { recursive: true, force: true });
});

/** A whole archive of `lines` under `head` (the export's header by default), its trailer's counts and checksum right. */
const archive = (lines: object[], head: object = header): string => {
  const body = [head, ...lines].map((l) => `${JSON.stringify(l)}\n`).join('');
  const of = (...types: string[]) => lines.filter((l) => types.includes((l as { type: string }).type)) as { versions?: unknown[] }[];
  const trailer = {
    type: 'end',
    entries: of('entry').length,
    versions: of('entry', 'entry-continued').reduce((n, l) => n + (l.versions?.length ?? 0), 0),
    records: of('record').length,
    sha256: createHash('sha256').update(body).digest('hex'),
  };
  return `${body}${JSON.stringify(trailer)}\n`;
};
/** pr-1's entry line with version `i` (0-based) changed by `patch`. */
const pr1With = (i: number, patch: Partial<Record<keyof Entry, unknown>>) => ({ ...pr1, versions: pr1.versions.map((v, j) => (j === i ? { ...v, ...patch } : v)) });
const at = (ms: number): string => new Date(ms).toISOString();
const writtenAt = (i: number): number => Date.parse((pr1.versions[i] as Entry).written_at);

let n = 0;
const tryImport = async (content: string) => {
  const path = join(dir, `archive-${++n}.jsonl`);
  await writeFile(path, content);
  const target = await openFromEnv({ CAIRN_DATA_DIR: join(dir, `target-${n}`) });
  try {
    const refusal = await importArchive(target.store, path).then(() => null, (error: Error) => error.message);
    // Everything the target holds of the archive's: entries, and the records snapshotOf reads.
    const held = [...(await snapshotOf(target.store, ['default'])).keys()];
    const team = await target.store.getRecord('teams/default', 'platform');
    return { refusal, held: held.length, entries: held.filter((k) => k.startsWith('entry ')).length, team };
  } finally {
    await target.store.close();
  }
};

describe('cairn import refuses a history no write could have made', () => {
  it('imports the export as it is: a rewrite after a delete or an expiry starts the entry anew', async () => {
    const gone = everyLine.find((l) => l.type === 'entry' && l.versions[0].key === 'gone')?.versions as Entry[];
    expect(gone.map((v) => v.deleted)).toEqual([false, true, false]);
    expect(gone[2]?.created_at).toBe(gone[2]?.written_at);
    expect(gone[2]?.created_at).not.toBe(gone[0]?.created_at);
    const brief = everyLine.find((l) => l.type === 'entry' && l.versions[0].key === 'brief')?.versions as Entry[];
    expect(brief[1]?.created_at).toBe(brief[1]?.written_at);
    const judged = everyLine.find((l) => l.type === 'entry' && l.versions[0].key === 'judged')?.versions as Entry[];
    expect(Date.parse(judged[1]?.expires_at as string) - Date.parse(judged[1]?.written_at as string)).toBeLessThan(1_000);
    expect(header.namespaces).toEqual(['default']);
    const imported = await tryImport(archive(everyLine));
    expect(imported).toMatchObject({ refusal: null, entries: 4 });
    expect(imported.team).not.toBeNull();
  });

  it('allows clocks that disagree by a few minutes: a replica behind the one before it, an exporter ahead of the importer', async () => {
    const behind = pr1With(1, { written_at: at(writtenAt(0) - 60_000) });
    const ahead = { ...header, cut: at(Date.now() + 60_000) };
    expect(await tryImport(archive([behind, teamLine], ahead))).toMatchObject({ refusal: null, entries: 1 });
  });

  it('takes the same record twice once (namespaces `a` and `a/events` both hold `dedup/a/events/…`)', async () => {
    expect(await tryImport(archive([teamLine, pr1, teamLine]))).toMatchObject({ refusal: null, entries: 1, team: expect.anything() });
  });

  const refusals: [string, () => string, RegExp][] = [
    ['a version written before the one it follows', () => archive([teamLine, pr1With(1, { written_at: '2020-01-01T00:00:00.000Z' })]),
      /^line 3: version 2: written_at 2020-01-01T00:00:00\.000Z is before version 1's \(.+\): a later version is never written earlier/],
    ['a version written before the one it follows, on a continuation line', () => archive([
      { type: 'entry', versions: [pr1.versions[0]] },
      { type: 'entry-continued', versions: [{ ...pr1.versions[1], written_at: '2020-01-01T00:00:00.000Z' }] },
    ]), /^line 3: version 2: written_at 2020-01-01T00:00:00\.000Z is before version 1's/],
    ['a version created after it was written', () => archive([pr1With(0, { created_at: at(writtenAt(0) + 3_600_000) })]),
      /^line 2: version 1: created_at .+ is after written_at/],
    ['versions of one entry created at different times', () => archive([pr1With(1, { created_at: '2020-01-01T00:00:00.000Z' })]),
      /^line 2: version 2: created_at 2020-01-01T00:00:00\.000Z is not version 1's \(.+\): a write keeps the created_at of the live version it follows/],
    ['a rewrite after a delete that keeps the old created_at', () => archive([{
      type: 'entry',
      versions: [pr1.versions[0], { ...pr1.versions[0], version: 2, deleted: true, value: '', content_hash: contentHash(''), written_at: at(writtenAt(0) + 1) }, { ...pr1.versions[1], version: 3 }],
    }]), /^line 2: version 3: created_at .+ is not its written_at .+: a write after a delete or an expiry starts the entry anew/],
    ['a deletion as version 1', () => archive([{ type: 'entry', versions: [{ ...pr1.versions[0], deleted: true, value: '', content_hash: contentHash('') }] }]),
      /^line 2: version 1: version 1 is a deletion: an entry is created by a write/],
    ['a deletion of what was deleted already', () => archive([{
      type: 'entry',
      versions: [
        pr1.versions[0],
        { ...pr1.versions[0], version: 2, deleted: true, value: '', content_hash: contentHash(''), written_at: at(writtenAt(0) + 1) },
        { ...pr1.versions[0], version: 3, deleted: true, value: '', content_hash: contentHash(''), written_at: at(writtenAt(0) + 2), created_at: at(writtenAt(0) + 2) },
      ],
    }]), /^line 2: version 3: a deletion follows version 2, which was a deletion by then: a delete only ever follows a live version/],
    ['an entry line with a field no entry line has', () => archive([{ ...pr1, note: 'x' }]), /^line 2: an entry line holds type and versions only, not "note"/],
    ['an expiry before the version was written', () => archive([pr1With(0, { expires_at: '2000-01-01T00:00:00.000Z' })]),
      /^line 2: version 1: expires_at 2000-01-01T00:00:00\.000Z is not after written_at/],
    ['an expiry at the instant the version was written', () => archive([pr1With(0, { expires_at: pr1.versions[0]?.written_at })]),
      /^line 2: version 1: expires_at .+ is not after written_at/],
    ['a cut in the future', () => archive([pr1], { ...header, cut: '9999-01-01T00:00:00.000Z' }),
      /^line 1: the header's cut 9999-01-01T00:00:00\.000Z is in the future/],
    ['entries of a namespace the header does not list', () => archive([pr1], { ...header, namespaces: ['other'] }),
      /^line 2: default \/ repos\/acme\/api \/ pr-1 is in namespace "default", which the header does not list/],
    ['records of a namespace the header does not list', () => archive([{ ...teamLine, collection: 'teams/other' }]),
      /^line 2: record teams\/other \/ platform is of namespace "other", which the header does not list/],
    ['a retention policy of a namespace the header does not list', () => archive([{ ...everyLine.find((l) => l.collection === 'retention/policies'), id: 'other/repos/acme', data: { ...everyLine.find((l) => l.collection === 'retention/policies')?.data, namespace: 'other' } }]),
      /^line 2: record retention\/policies \/ other\/repos\/acme is of namespace "other", which the header does not list/],
    ['a header whose namespaces are not a list of names', () => archive([pr1], { ...header, namespaces: 'default' }),
      /the header's "namespaces" is neither "\*" nor a list of namespaces/],
    ['one record twice, with different data', () => archive([teamLine, pr1, { ...teamLine, data: { ...teamLine.data, members: ['mallory'] } }]),
      /^line 4: record teams\/default \/ platform is already on line 2/],
  ];
  for (const [what, content, message] of refusals) {
    it(`refuses ${what}, writing nothing`, async () => {
      const result = await tryImport(content());
      expect(result.refusal).toMatch(message);
      expect(result).toMatchObject({ held: 0, team: null });
    });
  }

  it('says so from `cairn import` as it refuses other archives (exit 1), creating nothing', async () => {
    const path = join(dir, 'backwards.jsonl');
    await writeFile(path, archive([pr1With(1, { written_at: '2020-01-01T00:00:00.000Z' })]));
    const target = join(dir, 'cli-target');
    const result = await runCli(['import', path], { CAIRN_DATA_DIR: target });
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/cannot import .*backwards\.jsonl: line 2: version 2: written_at 2020-01-01T00:00:00\.000Z is before version 1's .*\(nothing was imported\)/);
    expect(existsSync(target)).toBe(false);
  }, 30_000);
});
