import { type CairnProcess, spawnCairn } from './spawn-cairn.ts';

/**
 * The SIGKILL crash loop aimed at maintenance: writers write versions while a maintainer
 * runs compaction (forgetting throw-away entries, which compacts) or retention passes (a
 * keep-3-versions policy over the writers' entries), and the server is killed -9 at a random
 * moment. After each restart: every acknowledged write is there with its exact content,
 * unless retention was allowed to drop it (an older version, below the kept newest run);
 * each entry's versions are one contiguous run up to its head (nothing half-dropped); and
 * every acknowledged forget is still forgotten (nothing half-forgotten comes back).
 */
export interface MaintenanceCrashOptions {
  env: Record<string, string>;
  mode: 'compaction' | 'retention';
  /** Kills at the least. */
  cycles: number;
  /**
   * Kills at the most (default: `cycles`): past `cycles` the loop goes on until `enough` says the
   * kills have met what the test is about, which a few random kills may not have.
   */
  maxCycles?: number;
  enough?: (report: MaintenanceCrashReport) => boolean;
  writers: number;
}

export interface MaintenanceCrashReport {
  /** Kills made. */
  cycles: number;
  acknowledged: number;
  forgets: number;
  passes: number;
  /** Kills that landed while a compaction or pass was under way (from the server's log). */
  killedDuringMaintenance: number;
  /** Kills that cut off a forget or a retention pass the client had sent and not had answered. */
  killedDuringCall: number;
  lost: string[];
  gaps: string[];
  resurrected: string[];
}

const call = async (url: string, method: string, path: string, body?: unknown): Promise<{ status: number; body: any }> => {
  const res = await fetch(`${url}${path}`, {
    method,
    headers: body === undefined ? {} : { 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: res.status, body: res.headers.get('content-type')?.includes('json') ? await res.json() : null };
};

/** Every version still held, paging back through the whole history. */
const historyOf = async (url: string, key: string): Promise<Map<number, number>> => {
  const versions = new Map<number, number>();
  let before: number | null = null;
  do {
    const res = await call(url, 'GET', `/api/v1/history/crash/${key}?limit=1000${before ? `&before=${before}` : ''}`);
    if (res.status !== 200) throw new Error(`history of ${key} answered ${res.status}`);
    for (const v of res.body.versions as Array<{ version: number; value: { seq: number } }>) versions.set(v.version, v.value.seq);
    before = res.body.next_before as number | null;
  } while (before);
  return versions;
};

export const maintenanceCrashLoop = async (options: MaintenanceCrashOptions): Promise<MaintenanceCrashReport> => {
  const acked: { key: string; version: number; seq: number }[] = [];
  const forgotten: string[] = [];
  const report: MaintenanceCrashReport = { cycles: 0, acknowledged: 0, forgets: 0, passes: 0, killedDuringMaintenance: 0, killedDuringCall: 0, lost: [], gaps: [], resurrected: [] };
  const maxCycles = Math.max(options.cycles, options.maxCycles ?? options.cycles);
  let waited = false;
  // One more start than kills, so the last kill is checked too.
  for (let cycle = 0; ; cycle++) {
    const server: CairnProcess = await spawnCairn({ CAIRN_RETENTION_INTERVAL_MS: '0', ...options.env });
    await check(server.url, options.mode, acked, forgotten, cycle, report);
    const last = report.cycles >= maxCycles || (report.cycles >= options.cycles && (options.enough?.(report) ?? true));
    if (last) {
      await server.stop();
      break;
    }
    if (cycle === 0 && options.mode === 'retention') {
      const set = await call(server.url, 'PUT', '/api/v1/admin/retention', { entity_path: 'crash', keep_versions: 3 });
      if (set.status !== 200) throw new Error(`setting the policy answered ${set.status}`);
    }
    let stop = false;
    const writers = Array.from({ length: options.writers }, async (_, w) => {
      // Keys carry over between cycles, so retention and compaction meet old versions too.
      const key = `w${w}`;
      for (let seq = cycle * 1_000_000; !stop; seq++) {
        try {
          const res = await call(server.url, 'POST', '/api/v1/entries', { entity_path: 'crash', key, value: { seq, padding: 'x'.repeat(Math.floor(Math.random() * 3000)) } });
          if (res.status !== 201) throw new Error(`unexpected ${res.status}`);
          acked.push({ key, version: res.body.entry.version, seq });
        } catch {
          return;
        }
      }
    });
    let inCall = false;
    const maintainer = (async () => {
      for (let round = 0; !stop; round++) {
        try {
          if (options.mode === 'compaction') {
            const prefix = `junk/c${cycle}r${round}`;
            for (let i = 0; i < 5; i++) await call(server.url, 'POST', '/api/v1/entries', { entity_path: prefix, key: `k${i}`, value: 'y'.repeat(2000) });
            inCall = true;
            const res = await call(server.url, 'POST', '/api/v1/admin/forget', { entity_path: prefix });
            inCall = false;
            if (res.status === 200) {
              forgotten.push(prefix);
              report.forgets += 1;
            }
          } else {
            inCall = true;
            const res = await call(server.url, 'POST', '/api/v1/admin/retention/run', {});
            inCall = false;
            if (res.status === 200) report.passes += 1;
          }
        } catch {
          if (inCall) report.killedDuringCall += 1;
          return;
        }
      }
    })();
    await new Promise((r) => setTimeout(r, 300 + Math.random() * 900));
    // Until some forget or pass has been answered, a kill waits for one (once, up to 30 s): what
    // a restart must keep of it is half of what is checked, and on a loaded host one start's
    // compaction, left from the last kill, and a forget's own after it can outlast every cycle's
    // random wait (none answered in 10 kills, at load 9).
    if (!waited && report.forgets + report.passes === 0) {
      waited = true;
      for (const until = Date.now() + 30_000; report.forgets + report.passes === 0 && Date.now() < until; ) await new Promise((r) => setTimeout(r, 25));
    }
    const out = server.output();
    server.child.kill('SIGKILL');
    stop = true;
    await Promise.all([...writers, maintainer]);
    await server.exited;
    // A compaction the log shows started and not finished: the kill landed inside it.
    if ((out.match(/compacting the data log/g) ?? []).length > (out.match(/data log compacted/g) ?? []).length) report.killedDuringMaintenance += 1;
    report.cycles += 1;
  }
  report.acknowledged = acked.length;
  return report;
};

const check = async (
  url: string,
  mode: MaintenanceCrashOptions['mode'],
  acked: { key: string; version: number; seq: number }[],
  forgotten: string[],
  cycle: number,
  report: MaintenanceCrashReport,
): Promise<void> => {
  const keys = [...new Set(acked.map((a) => a.key))];
  const histories = new Map(await Promise.all(keys.map(async (k) => [k, await historyOf(url, k)] as const)));
  for (const [key, h] of histories) {
    const versions = [...h.keys()].sort((x, y) => x - y);
    const first = versions[0] ?? 1;
    if (versions.some((v, i) => v !== first + i) || (mode === 'compaction' && first !== 1)) report.gaps.push(`${key}: versions ${versions.join(',')} after cycle ${cycle}`);
  }
  // The head an entry has in the store: a write the kill cut off before its answer may still
  // have committed, and retention counts its newest 3 from that head, not from the newest
  // acknowledged version.
  const head = new Map<string, number>();
  for (const a of acked) head.set(a.key, Math.max(head.get(a.key) ?? 0, a.version));
  for (const [key, h] of histories) head.set(key, Math.max(head.get(key) ?? 0, ...h.keys()));
  for (const a of acked) {
    const h = histories.get(a.key) as Map<number, number>;
    const found = h.get(a.version);
    // Retention keeps the newest 3 of each entry's versions; older ones may be gone, never changed.
    const mayBeDropped = mode === 'retention' && a.version <= (head.get(a.key) ?? 0) - 3;
    if (found === a.seq || (found === undefined && mayBeDropped)) continue;
    const line = `${a.key} v${a.version} (seq ${a.seq}) found ${found ?? 'nothing'} after cycle ${cycle}`;
    if (!report.lost.some((l) => l.startsWith(`${a.key} v${a.version} `))) report.lost.push(line);
  }
  for (const prefix of forgotten) {
    const res = await call(url, 'GET', `/api/v1/entries?entity_path=${encodeURIComponent(prefix)}&limit=10`);
    if (res.status === 200 && (res.body.entries?.length ?? 0) > 0 && !report.resurrected.includes(prefix)) report.resurrected.push(prefix);
  }
};
