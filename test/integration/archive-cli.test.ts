import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { Entry } from '../../packages/server/src/domain/entry.ts';
import { runCli } from '../helpers/run-cli.ts';
import { spawnCairn } from '../helpers/spawn-cairn.ts';
import { openFromEnv, snapshotOf } from '../helpers/archive-fixture.ts';

/**
 * `cairn export` from a running filesystem server (its admin endpoint) while writers keep
 * writing batches, then `cairn import` into another data directory; and the refusals.
 */
const dir = await mkdtemp(join(tmpdir(), 'cairn-archive-cli-'));
afterAll(() => rm(dir, { recursive: true, force: true }));
const ADMIN = 'admin-key-for-archive-tests';

interface Line { type?: string; format?: string; cut?: string; versions?: Entry[] }
const linesOf = async (path: string): Promise<Line[]> =>
  (await readFile(path, 'utf8')).trim().split('\n').map((l) => JSON.parse(l) as Line);

describe('cairn export and cairn import', () => {
  it('exports a running server point-in-time while it writes, and imports it elsewhere', async () => {
    const source = join(dir, 'source');
    const server = await spawnCairn({ CAIRN_DATA_DIR: source, CAIRN_API_KEYS: ADMIN, CAIRN_RATE_LIMIT_RPM: '0' });
    const headers = { 'content-type': 'application/json', 'x-cairn-api-key': ADMIN };
    // Writers: each batch gives both entries of a pair the same value `n`; record when each was acknowledged.
    const acked: Array<{ n: number; at: number }> = [];
    let stop = false;
    const writer = async (w: number): Promise<void> => {
      for (let n = 0; !stop && n < 2000; n++) {
        const res = await fetch(`${server.url}/api/v1/entries/batch`, {
          method: 'POST', headers,
          body: JSON.stringify({ entries: ['a', 'b'].map((key) => ({ entity_path: `pairs/w${w}`, key, value: { n } })) }),
        });
        expect(res.status).toBe(200);
        acked.push({ n: w * 10_000 + n, at: Date.now() });
      }
    };
    const writers = [writer(0), writer(1)];
    await new Promise((resolve) => setTimeout(resolve, 500));
    const file = join(dir, 'all.jsonl');
    const exported = await runCli(['export', '--all', '-o', file], { CAIRN_HTTP_URL: server.url, CAIRN_API_KEY: ADMIN });
    stop = true;
    await Promise.all(writers);
    expect(exported.code, exported.stderr).toBe(0);

    const lines = await linesOf(file);
    expect(lines[0]).toMatchObject({ format: 'cairn-archive', version: 1 });
    expect(lines.at(-1)?.type).toBe('end');
    const cut = Date.parse(lines[0]?.cut as string);
    const values = new Map<string, number[]>();
    for (const line of lines.filter((l) => l.type === 'entry')) {
      const versions = line.versions as Entry[];
      for (const v of versions) expect(Date.parse(v.written_at)).toBeLessThanOrEqual(cut);
      values.set(`${versions[0]?.entity_path}/${versions[0]?.key}`, versions.map((v) => (v.value as { n: number }).n));
    }
    // A batch is in the archive on both of its entries or on neither; every one acknowledged before the cut is in.
    for (const w of [0, 1]) {
      expect(values.get(`pairs/w${w}/a`)).toEqual(values.get(`pairs/w${w}/b`));
      const inArchive = values.get(`pairs/w${w}/a`)?.length ?? 0;
      const ackedBeforeCut = acked.filter((a) => Math.floor(a.n / 10_000) === w && a.at <= cut).length;
      expect(inArchive).toBeGreaterThanOrEqual(ackedBeforeCut);
    }
    expect(await server.stop('SIGTERM')).toBe(0);

    // Offline now, the source can be exported directly too; both stores hold the same versions
    // up to the cut. Commands on different data directories run at once: the import and the
    // direct export, then the second import and the import of the direct export.
    const target = join(dir, 'target');
    const direct = join(dir, 'direct.jsonl.gz');
    const [imported, directly] = await Promise.all([runCli(['import', file], { CAIRN_DATA_DIR: target }), runCli(['export', '--all', '--gzip', '-o', direct], { CAIRN_DATA_DIR: source })]);
    expect(imported.code, imported.stderr).toBe(0);
    expect(imported.stderr).toMatch(/entries written/);
    expect(directly.code, directly.stderr).toBe(0);
    const [again, fromGzip] = await Promise.all([runCli(['import', file], { CAIRN_DATA_DIR: target }), runCli(['import', direct], { CAIRN_DATA_DIR: join(dir, 'from-gzip') })]);
    expect(again.stderr).toMatch(/: 0 entries written \(0 versions\)/);
    expect(fromGzip.code, fromGzip.stderr).toBe(0);
    expect(fromGzip.stderr).toMatch(/: [1-9]\d* entries written/);
    const copy = await openFromEnv({ CAIRN_DATA_DIR: target });
    const copied = await snapshotOf(copy.store, ['default']);
    await copy.store.close();
    for (const line of lines.filter((l) => l.type === 'entry')) {
      const v = line.versions as Entry[];
      expect(copied.has(`entry default/${v[0]?.entity_path}/${v[0]?.key}`)).toBe(true);
    }
  }, 120_000);

  it('refuses a truncated, foreign or newer archive, and a target holding other versions, changing nothing', async () => {
    const source = join(dir, 'refusals');
    const server = await spawnCairn({ CAIRN_DATA_DIR: source, CAIRN_API_KEYS: ADMIN, CAIRN_RATE_LIMIT_RPM: '0' });
    const headers = { 'content-type': 'application/json', 'x-cairn-api-key': ADMIN };
    for (let i = 0; i < 5; i++) {
      const written = await fetch(`${server.url}/api/v1/entries`, { method: 'POST', headers, body: JSON.stringify({ entity_path: 'notes', key: `n${i}`, value: { i } }) });
      expect(written.status).toBe(201);
    }
    const res = await fetch(`${server.url}/api/v1/admin/export`, { headers: { 'x-cairn-api-key': ADMIN } });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('application/x-ndjson');
    const text = await res.text();
    expect((await fetch(`${server.url}/api/v1/admin/export`)).status).toBe(401);
    // A managed admin key exports its own namespace only, and not at all when confined to prefixes.
    const issue = async (body: object): Promise<string> => {
      const issued = await fetch(`${server.url}/api/v1/admin/keys`, { method: 'POST', headers, body: JSON.stringify(body) });
      expect(issued.status).toBe(201);
      return ((await issued.json()) as { key: string }).key;
    };
    const teamAdmin = await issue({ name: 'acme-admin', scopes: ['admin'], namespace: 'acme' });
    const confined = await issue({ name: 'acme-incidents', scopes: ['admin'], namespace: 'acme', prefixes: ['incidents'] });
    const exportAs = (key: string, query = '') => fetch(`${server.url}/api/v1/admin/export${query}`, { headers: { 'x-cairn-api-key': key } });
    expect((await exportAs(teamAdmin)).status).toBe(200);
    expect((await exportAs(teamAdmin, '?all=true')).status).toBe(403);
    expect((await exportAs(teamAdmin, '?namespace=default')).status).toBe(403);
    expect((await exportAs(confined)).status).toBe(403);
    const both = await exportAs(ADMIN, '?all=true&namespace=acme');
    expect(both.status).toBe(422);
    expect(((await both.json()) as { error: { details: { field: string }[] } }).error.details.map((d) => d.field)).toEqual(['namespace']);
    // The export is audited once its archive is complete (the acme one above, whose answer
    // began at once and whose archive comes after the export's settle, SETTLE_MS).
    const audited = async (): Promise<number> => {
      const audit = await fetch(`${server.url}/api/v1/admin/audit?namespace=acme&action=archive.exported`, { headers: { 'x-cairn-api-key': ADMIN } });
      return ((await audit.json()) as { events: unknown[] }).events.length;
    };
    await expect.poll(audited, { timeout: 5_000 }).toBe(1);
    // The store is locked by the running server: a direct export says how to export instead.
    // (Both commands only meet the server's lock, so they run at once.)
    await writeFile(join(dir, 'served.jsonl'), text);
    const [locked, lockedImport] = await Promise.all([runCli(['export'], { CAIRN_DATA_DIR: source }), runCli(['import', join(dir, 'served.jsonl')], { CAIRN_DATA_DIR: source })]);
    expect(locked.code).toBe(1);
    expect(locked.stderr).toMatch(/CAIRN_HTTP_URL/);
    expect(lockedImport.code).toBe(1);
    expect(lockedImport.stderr).toMatch(/stop it, import, then start it again/);
    await server.stop('SIGTERM');

    const lines = text.trim().split('\n');
    const target = join(dir, 'refusal-target');
    const tryImport = async (name: string, content: string) => {
      const path = join(dir, name);
      await writeFile(path, content);
      return runCli(['import', path], { CAIRN_DATA_DIR: target });
    };
    // Each is refused before the target is opened, so the four run at once.
    const [truncated, tampered, newer, foreign] = await Promise.all([
      tryImport('truncated.jsonl', `${lines.slice(0, -2).join('\n')}\n`),
      tryImport('tampered.jsonl', `${[lines[0], lines[1]?.replace('"i":', '"j":'), ...lines.slice(2)].join('\n')}\n`),
      tryImport('newer.jsonl', `${[lines[0]?.replace('"version":1', '"version":2'), ...lines.slice(1)].join('\n')}\n`),
      tryImport('foreign.jsonl', '{"hello":"world"}\n'),
    ]);
    expect(truncated.code).toBe(1);
    expect(truncated.stderr).toMatch(/no trailer line: it was cut short/);
    expect(tampered.stderr).toMatch(/checksum does not match/);
    expect(newer.stderr).toMatch(/format version 2 is not supported; this Cairn reads version 1/);
    expect(foreign.stderr).toMatch(/not a Cairn archive/);
    const empty = await openFromEnv({ CAIRN_DATA_DIR: target });
    expect((await snapshotOf(empty.store, ['default'])).size).toBe(0);
    // The target holds another version 1 of one entry: refused, named.
    const other = JSON.parse(lines[1] as string) as { versions: Entry[] };
    await empty.store.append({ ...(other.versions[0] as Entry), value: { other: true } }, 0);
    await empty.store.close();
    const conflicting = await tryImport('whole.jsonl', `${lines.join('\n')}\n`);
    expect(conflicting.code).toBe(1);
    expect(conflicting.stderr).toMatch(/already holds a different version 1 of default \/ notes \/ n\d/);
  }, 60_000);
});
