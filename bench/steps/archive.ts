import { createReadStream, createWriteStream } from 'node:fs';
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { finished, pipeline } from 'node:stream/promises';
import { createGzip } from 'node:zlib';
import pino from 'pino';
import { contentHash } from '../../packages/server/src/domain/content-hash.ts';
import type { Entry } from '../../packages/server/src/domain/entry.ts';
import type { BatchItem, Store } from '../../packages/server/src/ports/store.ts';
import { exportArchive } from '../../packages/server/src/services/archive/export-archive.ts';
import { importArchive } from '../../packages/server/src/services/archive/import-archive.ts';
import { openFsStore } from '../../packages/server/src/store/fs/index.ts';
import { openPostgresStore } from '../../packages/server/src/store/postgres/index.ts';
import { startPostgres } from '../../test/helpers/postgres.ts';
import type { Step } from '../lib/step.ts';

/** 100k entries, one to three versions each (two on average), ~300-byte values. */
const ENTRIES = Number(process.env.BENCH_ARCHIVE_ENTRIES ?? 100_000);

interface Rate {
  seconds: number;
  entries_per_s: number;
  versions_per_s: number;
}

export interface ArchiveBench {
  entries: number;
  versions: number;
  archive_bytes: number;
  archive_gzip_bytes: number;
  /** Resident memory the export process grew by at its peak, MiB: flat, whatever the store's size. */
  export_rss_growth_mib: number;
  export_fs: Rate;
  import_fs: Rate;
  import_postgres: Rate;
}

const rate = (started: number, entries: number, versions: number): Rate => {
  const seconds = (performance.now() - started) / 1000;
  return { seconds: Math.round(seconds * 10) / 10, entries_per_s: Math.round(entries / seconds), versions_per_s: Math.round(versions / seconds) };
};

const fill = async (store: Store, progress: (d: string) => void): Promise<number> => {
  const at = Date.now() - 3_600_000;
  let versions = 0;
  for (let start = 0; start < ENTRIES; start += 200) {
    const items: BatchItem[] = [];
    for (let i = start; i < Math.min(ENTRIES, start + 200); i++) {
      const address = { namespace: 'default', entity_path: `services/svc-${i % 500}/notes`, key: `note-${i}` };
      for (let v = 1; v <= 1 + (i % 3); v++) {
        // Every thirtieth entry's third version a delete, as deleteEntry writes one: no value (import refuses others).
        const deleted = v === 3 && i % 30 === 2;
        const value = deleted ? '' : { summary: `note ${i} version ${v}: the deploy pipeline for this service needs the staging gate before production`, owner: `team-${i % 17}`, v };
        const written = new Date(at + i * 10 + v).toISOString();
        // As a write makes them: every version keeps the created_at of the first (import refuses other histories).
        const created = new Date(at + i * 10 + 1).toISOString();
        const entry: Entry = {
          namespace: address.namespace, entity_path: address.entity_path, key: address.key, value, version: v, confidence: 0.9, agent_id: `agent-${i % 7}`,
          event_type: null, memory_type: 'fact', shared: false, tags: ['bench'], provenance: {}, content_hash: contentHash(value), created_at: created,
          written_at: written, expires_at: null, deleted, evidence: { successes: 0, failures: 0, status: 'untested' }, links: [],
        };
        items.push({ entry, expectedHead: v - 1 });
        versions++;
      }
    }
    await store.appendBatch(items);
    if (start % 10_000 === 0) progress(`filling ${start} / ${ENTRIES}`);
  }
  return versions;
};

/** `cairn export` and `cairn import` at 100k entries with history: rates and the archive's size. */
export const archiveStep: Step<ArchiveBench> = {
  key: 'archive',
  title: () => `export and import of ${ENTRIES} entries with history (filesystem → archive → filesystem, PostgreSQL)`,
  async run(ctx) {
    const dir = await mkdtemp(join(tmpdir(), 'cairn-bench-archive-'));
    const logger = pino({ level: 'silent' });
    const pg = await startPostgres();
    try {
      const source = await openFsStore({ dir: join(dir, 'source'), logger });
      const versions = await fill(source, ctx.progress);
      const file = join(dir, 'archive.jsonl');

      ctx.progress('export');
      const rssBefore = process.memoryUsage().rss;
      let rssPeak = rssBefore;
      const sampler = setInterval(() => (rssPeak = Math.max(rssPeak, process.memoryUsage().rss)), 50);
      let started = performance.now();
      const out = createWriteStream(file);
      await exportArchive(source, out, { namespaces: '*', now: Date.now, settleMs: 0 });
      out.end();
      await finished(out);
      const export_fs = rate(started, ENTRIES, versions);
      clearInterval(sampler);
      await source.close();
      await pipeline(createReadStream(file), createGzip(), createWriteStream(`${file}.gz`));

      ctx.progress('import into the filesystem');
      const fsTarget = await openFsStore({ dir: join(dir, 'target'), logger });
      started = performance.now();
      await importArchive(fsTarget, file);
      const import_fs = rate(started, ENTRIES, versions);
      await fsTarget.close();

      ctx.progress('import into PostgreSQL');
      const pgTarget = await openPostgresStore({ dsn: pg.dsn, logger });
      started = performance.now();
      await importArchive(pgTarget, file);
      const import_postgres = rate(started, ENTRIES, versions);
      await pgTarget.close();

      const figures: ArchiveBench = {
        entries: ENTRIES,
        versions,
        archive_bytes: (await stat(file)).size,
        archive_gzip_bytes: (await stat(`${file}.gz`)).size,
        export_rss_growth_mib: Math.round((rssPeak - rssBefore) / 1048576),
        export_fs,
        import_fs,
        import_postgres,
      };
      const mib = (b: number) => `${(b / 1048576).toFixed(1)} MiB`;
      const line = (name: string, r: Rate) => `  ${name.padEnd(22)} ${r.entries_per_s} entries/s (${r.versions_per_s} versions/s, ${r.seconds} s)`;
      return {
        figures,
        lines: [
          `  ${ENTRIES} entries, ${versions} versions; archive ${mib(figures.archive_bytes)} (gzip ${mib(figures.archive_gzip_bytes)})`,
          line('export (filesystem)', export_fs),
          `  export memory growth   ${figures.export_rss_growth_mib} MiB at its peak`,
          line('import (filesystem)', import_fs),
          line('import (PostgreSQL)', import_postgres),
        ],
      };
    } finally {
      await pg.stop();
      await rm(dir, { recursive: true, force: true });
    }
  },
};
