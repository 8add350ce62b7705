import { createHash } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { finished } from 'node:stream/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Entry, EntryAddress } from '../../packages/server/src/domain/entry.ts';
import type { BatchItem, HistoryQuery, Store } from '../../packages/server/src/ports/store.ts';
import { type ExportOptions, exportArchive } from '../../packages/server/src/services/archive/export-archive.ts';
import { HISTORY_PAGE } from '../../packages/server/src/services/archive/export-history.ts';
import { importArchive } from '../../packages/server/src/services/archive/import-archive.ts';
import { LONG_HISTORY, fillLongHistories, fillStore, openFromEnv, snapshotOf } from '../helpers/archive-fixture.ts';

/**
 * A history longer than one archive line: the reader takes the lines that continue it only
 * right after it and in order, an import interrupted between them finishes when run again,
 * and an export that retention races while it reads a history in pages says so rather than
 * write a gap. (archive-pairs.test.ts moves such histories between every pair of backends.)
 */
const dir = await mkdtemp(join(tmpdir(), 'cairn-archive-long-'));
afterAll(() => rm(dir, { recursive: true, force: true }));

/** About twenty of the long histories' versions per line. */
const LINE_CHARS = 16 * 1024;
const WHOLE = { namespace: 'default', entity_path: 'long/history', key: 'whole' };
type Line = { type: string; versions?: Entry[]; collection?: string };

let header = '';
/** The exported lines between header and trailer. */
let body: Line[] = [];
let snapshot = new Map<string, string>();

const exportTo = async (store: Store, path: string, options: Partial<ExportOptions> = {}) => {
  const out = createWriteStream(path);
  try {
    return await exportArchive(store, out, { namespaces: '*', now: Date.now, settleMs: 20, entryLineChars: LINE_CHARS, ...options });
  } finally {
    out.end();
    await finished(out);
  }
};

const filled = async (name: string) => {
  const source = await openFromEnv({ CAIRN_DATA_DIR: join(dir, name) });
  await fillStore(source.store, ['default']);
  await fillLongHistories(source.store, 'default');
  return source;
};

beforeAll(async () => {
  const source = await filled('source');
  const path = join(dir, 'exported.jsonl');
  await exportTo(source.store, path);
  snapshot = await snapshotOf(source.store, ['default']);
  await source.store.close();
  const lines = (await readFile(path, 'utf8')).trimEnd().split('\n');
  header = lines[0] as string;
  body = lines.slice(1, -1).map((l) => JSON.parse(l) as Line);
});

/** A whole archive of `lines` after the header, with the trailer's counts (entries are `entry` lines) and checksum right. */
const archive = (lines: Line[]): string => {
  const text = [header, ...lines.map((l) => JSON.stringify(l))].map((l) => `${l}\n`).join('');
  const entries = lines.filter((l) => l.type === 'entry').length;
  const versions = lines.reduce((n, l) => n + (l.versions?.length ?? 0), 0);
  const records = lines.filter((l) => l.type === 'record').length;
  return `${text}${JSON.stringify({ type: 'end', entries, versions, records, sha256: createHash('sha256').update(text).digest('hex') })}\n`;
};

/** Where the whole long history's entry line is, and how many lines continue it. */
const wholeAt = (): { at: number; lines: number } => {
  const at = body.findIndex((l) => l.type === 'entry' && l.versions?.[0]?.entity_path === WHOLE.entity_path && l.versions[0].key === WHOLE.key);
  let lines = 1;
  while (body[at + lines]?.type === 'entry-continued') lines++;
  return { at, lines };
};

let n = 0;
/** Imports `content` into a fresh data directory (holding what `prepare` writes); `batches` gathers how many of the whole long history's versions each store batch wrote. */
const tryImport = async (content: string, prepare?: (store: Store) => Promise<void>, batches: number[] = []) => {
  const path = join(dir, `archive-${++n}.jsonl`);
  await writeFile(path, content);
  const target = await openFromEnv({ CAIRN_DATA_DIR: join(dir, `target-${n}`) });
  try {
    await prepare?.(target.store);
    const landed: number[] = [];
    const store = watched(target.store, { batch: (items) => batches.push(items.length) });
    const outcome = await importArchive(store, path, { onLanded: (count) => landed.push(count) }).then(
      (report) => ({ report, refusal: null }),
      (error: Error) => ({ report: null, refusal: error.message }),
    );
    return { ...outcome, landed, copy: await snapshotOf(target.store, ['default']) };
  } finally {
    await target.store.close();
  }
};

describe('an entry history continued over several lines', () => {
  it('is exported as an entry line and the continuations right after it, and imported whole', async () => {
    const { at, lines } = wholeAt();
    expect(lines).toBeGreaterThan(5);
    const versions = body.slice(at, at + lines).flatMap((l) => (l.versions ?? []).map((v) => v.version));
    expect(versions).toEqual(Array.from({ length: LONG_HISTORY.versions }, (_, i) => i + 1));
    const entries = body.filter((l) => l.type === 'entry').length;
    const batches: number[] = [];
    const result = await tryImport(archive(body), undefined, batches);
    expect(result.refusal).toBeNull();
    // Landed a line at a time: memory holds a few lines of a history, never all of it.
    const longest = Math.max(...body.slice(at, at + lines).map((l) => l.versions?.length ?? 0));
    expect(batches.filter((b) => b > 0).length).toBe(lines);
    expect(Math.max(...batches)).toBeLessThanOrEqual(longest);
    expect(result.report).toMatchObject({ entries_written: entries, entries_present: 0 });
    expect([...result.copy.keys()].sort()).toEqual([...snapshot.keys()].sort());
    for (const [k, v] of snapshot) expect(result.copy.get(k), k).toBe(v);
    // Progress counts entries, each once it is whole, not lines.
    expect(result.landed.at(-1)).toBe(entries);
  });

  it('finishes an import interrupted between its lines, or within one, writing only what is missing', async () => {
    const { at } = wholeAt();
    const firstLine = body[at]?.versions as Entry[];
    const secondLine = body[at + 1]?.versions as Entry[];
    for (const held of [firstLine, [...firstLine, ...secondLine.slice(0, 3)], firstLine.slice(0, 4)]) {
      const result = await tryImport(archive(body), (store) => store.appendBatch(held.map((entry) => ({ entry, expectedHead: entry.version - 1 }))));
      expect(result.refusal).toBeNull();
      expect(result.report?.versions_written).toBe(body.reduce((sum, l) => sum + (l.versions?.length ?? 0), 0) - held.length);
      expect(result.report?.entries_present).toBe(0);
      expect(result.copy.get(`entry default/long/history/whole`)).toBe(snapshot.get(`entry default/long/history/whole`));
    }
  });

  const refusals: Array<[string, () => Line[], RegExp]> = [
    ['a continuation that skips a version', () => {
      const { at } = wholeAt();
      return body.map((l, i) => (i === at + 1 ? { ...l, versions: l.versions?.slice(1) } : l));
    }, /line \d+: continues default \/ long\/history \/ whole at version (\d+), skipping version \d+ \(it should begin at version \d+\)/],
    ['a continuation that repeats a version', () => {
      const { at } = wholeAt();
      return body.map((l, i) => (i === at + 1 ? { ...l, versions: [body[at]?.versions?.at(-1) as Entry, ...(l.versions ?? [])] } : l));
    }, /line \d+: continues default \/ long\/history \/ whole with version \d+, which the lines before it already hold \(it should begin at version \d+\)/],
    ['a continuation line given twice', () => {
      const { at } = wholeAt();
      return [...body.slice(0, at + 2), body[at + 1] as Line, ...body.slice(at + 2)];
    }, /continues default \/ long\/history \/ whole with version \d+, which the lines before it already hold \(it should begin at version \d+\)/],
    ['a continuation of another entry', () => {
      const { at } = wholeAt();
      return body.map((l, i) => (i === at + 1 ? { ...l, versions: l.versions?.map((v) => ({ ...v, key: 'other' })) } : l));
    }, /line \d+: continues default \/ long\/history \/ whole \(line \d+\) but holds versions of default \/ long\/history \/ other/],
    ['a continuation moved after another entry\'s line', () => {
      const { at, lines } = wholeAt();
      const moved = body[at + lines - 1] as Line;
      const rest = body.filter((_, i) => i !== at + lines - 1);
      const other = rest.findIndex((l, i) => i !== at && l.type === 'entry');
      return [...rest.slice(0, other + 1), moved, ...rest.slice(other + 1)];
    }, /but holds versions of default \/ long\/history \/ whole/],
    ['a record line between an entry line and its continuation', () => {
      const { at } = wholeAt();
      const record = body.find((l) => l.type === 'record') as Line;
      return [...body.slice(0, at + 1), record, ...body.slice(at + 1)].filter((l, i, all) => l !== record || all.indexOf(l) === i);
    }, /line \d+: a continuation of default \/ long\/history \/ whole that does not follow its entry line/],
    ['a continuation right after the header', () => {
      const { at } = wholeAt();
      return [body[at + 1] as Line, ...body.filter((_, i) => i !== at + 1)];
    }, /line 2: a continuation of default \/ long\/history \/ whole that does not follow its entry line/],
    ['a continuation marked as an entry line of its own', () => {
      const { at } = wholeAt();
      return body.map((l, i) => (i === at + 1 ? { ...l, type: 'entry' } : l));
    }, /line \d+: default \/ long\/history \/ whole already had a line of its own/],
    ['a continued entry given again whole on one line', () => {
      const { at, lines } = wholeAt();
      const whole = { type: 'entry', versions: body.slice(at, at + lines).flatMap((l) => l.versions ?? []) };
      return [...body, whole];
    }, /line \d+: default \/ long\/history \/ whole already had a line of its own/],
  ];
  for (const [what, lines, message] of refusals) {
    it(`refuses ${what}, naming the line, writing nothing`, async () => {
      expect(wholeAt().lines, 'the export continues the long history').toBeGreaterThan(1);
      const result = await tryImport(archive(lines()));
      expect(result.refusal).toMatch(message);
      expect(result.refusal).toMatch(/\(nothing was imported\)$/);
      expect(result.copy.size).toBe(0);
    });
  }
});

/**
 * `store` as it is, with `history` and `appendBatch` told to `watch` before they run: to see
 * how much of the whole long history each reads or writes at once, and to run a retention
 * pass just before one of them.
 */
const watched = (store: Store, watch: { history?: (query: HistoryQuery) => Promise<void>; batch?: (items: readonly BatchItem[]) => void }): Store => {
  const isWhole = (a: EntryAddress): boolean => a.entity_path === WHOLE.entity_path && a.key === WHOLE.key;
  const history = async (address: EntryAddress, query: HistoryQuery): Promise<Entry[]> => {
    if (isWhole(address)) await watch.history?.(query);
    return store.history(address, query);
  };
  const appendBatch = async (items: readonly BatchItem[]): Promise<void> => {
    watch.batch?.(items.filter((item) => isWhole(item.entry)));
    return store.appendBatch(items);
  };
  return new Proxy(store, {
    get: (target, name) => {
      if (name === 'history') return history;
      if (name === 'appendBatch') return appendBatch;
      const value = Reflect.get(target, name, target) as unknown;
      return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
    },
  });
};

/**
 * `store` with retention dropping the whole long history's versions below `below` just before
 * the export reads its page number `page` (1 = its oldest): a retention pass running while an
 * export reads the history page by page. `pages` gathers how many versions each read asked for.
 */
const racedBy = (store: Store, page: number, below: number, pages: number[] = []): Store =>
  watched(store, {
    history: async (query) => {
      pages.push(query.limit);
      if (pages.length === page) await store.dropVersionsBefore(WHOLE, below);
    },
  });

describe('an export reading a long history while retention drops its oldest versions', () => {
  it('reads it a page at a time, from its new oldest version when nothing of it was written yet', async () => {
    const source = await filled('raced-early');
    const path = join(dir, 'raced-early.jsonl');
    const pages: number[] = [];
    try {
      await exportTo(racedBy(source.store, 1, 61, pages), path);
    } finally {
      await source.store.close();
    }
    // Never the whole history at once: memory holds a page of it.
    expect(pages.length).toBeGreaterThan(2);
    expect(Math.max(...pages)).toBeLessThanOrEqual(HISTORY_PAGE);
    const lines = (await readFile(path, 'utf8')).trimEnd().split('\n').slice(1, -1).map((l) => JSON.parse(l) as Line);
    const versions = lines.flatMap((l) => (l.versions ?? []).filter((v) => v.entity_path === WHOLE.entity_path && v.key === WHOLE.key).map((v) => v.version));
    expect(versions).toEqual(Array.from({ length: LONG_HISTORY.versions - 60 }, (_, i) => i + 61));
    expect((await tryImport(await readFile(path, 'utf8'))).refusal).toBeNull();
  });

  it('fails, saying why, rather than write a history with a gap', async () => {
    const source = await filled('raced-late');
    try {
      await expect(exportTo(racedBy(source.store, 2, 151), join(dir, 'raced-late.jsonl'))).rejects.toThrow(
        /versions of default \/ long\/history \/ whole were removed \(retention or forget\) while the export read its history: export again/,
      );
    } finally {
      await source.store.close();
    }
  });
});
