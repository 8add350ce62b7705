import { recheckEveryCycle } from './crash-depth.ts';
import { killMoment } from './kill-moment.ts';
import { type CairnProcess, spawnCairn } from './spawn-cairn.ts';

/**
 * The SIGKILL crash loop, as a library for the crash test and `npm run reliability`: start
 * `cairn serve`, write from several clients at once, kill -9 it at a random moment, restart,
 * and check that every acknowledged write is there with its exact content and that no entry
 * is half-written (every version readable, versions contiguous).
 */
export interface CrashLoopOptions {
  /** The backend: CAIRN_DATA_DIR or CAIRN_DB_DSN, kept across restarts. */
  env: Record<string, string>;
  cycles: number;
  writers: number;
  /** Called after each cycle's check, for progress. */
  onCycle?: (cycle: number, acknowledged: number) => void;
  /** Check every acknowledged write at every restart (default: at full depth only; crash-depth.ts). */
  recheckAll?: boolean;
}

export interface CrashLoopReport {
  cycles: number;
  acknowledged: number;
  /** Kills that cut off at least one write the server had been sent and not yet answered. */
  killedMidWrite: number;
  /** Acknowledged writes missing or changed after a restart (goal: none). */
  lost: string[];
  /** Keys whose versions have a gap (a half-written entry). */
  gaps: string[];
}

interface Acked {
  key: string;
  version: number;
  seq: number;
}

const historyOf = async (url: string, key: string): Promise<Map<number, { seq: number }>> => {
  const versions = new Map<number, { seq: number }>();
  let before: number | null = null;
  do {
    const res = await fetch(`${url}/api/v1/history/crash/${key}?limit=1000${before ? `&before=${before}` : ''}`);
    if (res.status !== 200) throw new Error(`history of ${key} answered ${res.status}`);
    const body = (await res.json()) as { versions: Array<{ version: number; value: { seq: number } }>; next_before: number | null };
    for (const v of body.versions) versions.set(v.version, v.value);
    before = body.next_before;
  } while (before);
  return versions;
};

/**
 * What was acknowledged, checked against a freshly started server. Every key is written in one
 * cycle only, and checked after the restart that follows it; `all` (the last start, and every
 * start at full depth) checks every key again, so that what later crashes did to earlier
 * writes is seen too.
 */
const check = async (url: string, acked: Acked[], cycle: number, report: CrashLoopReport, all: boolean): Promise<void> => {
  const keys = [...new Set(acked.map((a) => a.key))].filter((k) => all || k.startsWith(`c${cycle - 1}-`));
  const histories = new Map(await Promise.all(keys.map(async (k) => [k, await historyOf(url, k)] as const)));
  for (const a of acked) {
    if (!histories.has(a.key)) continue;
    const found = histories.get(a.key)?.get(a.version)?.seq;
    if (found !== a.seq && !report.lost.some((l) => l.startsWith(`${a.key} v${a.version} `))) report.lost.push(`${a.key} v${a.version} (seq ${a.seq}) found ${found ?? 'nothing'} after cycle ${cycle}`);
  }
  for (const [key, h] of histories) {
    const versions = [...h.keys()].sort((x, y) => x - y);
    if (versions.some((v, i) => v !== i + 1) && !report.gaps.some((g) => g.startsWith(`${key}:`))) report.gaps.push(`${key}: versions ${versions.join(',')}`);
  }
};

export const crashLoop = async (options: CrashLoopOptions): Promise<CrashLoopReport> => {
  const acked: Acked[] = [];
  const report: CrashLoopReport = { cycles: options.cycles, acknowledged: 0, killedMidWrite: 0, lost: [], gaps: [] };
  // One more start than kills, so the last kill is checked too.
  for (let cycle = 0; cycle <= options.cycles; cycle++) {
    const server: CairnProcess = await spawnCairn(options.env);
    await check(server.url, acked, cycle, report, cycle === options.cycles || (options.recheckAll ?? recheckEveryCycle()));
    options.onCycle?.(cycle, acked.length);
    if (cycle === options.cycles) {
      await server.stop();
      break;
    }
    let stop = false;
    let cutOff = 0;
    const writers = Array.from({ length: options.writers }, async (_, w) => {
      const key = `c${cycle}-w${w}`;
      for (let seq = 0; !stop; seq++) {
        const padding = 'x'.repeat(Math.floor(Math.random() * 4000));
        try {
          const res = await fetch(`${server.url}/api/v1/entries`, {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify({ entity_path: 'crash', key, value: { seq, padding } }),
          });
          if (res.status !== 201) throw new Error(`unexpected ${res.status}`);
          const body = (await res.json()) as { entry: { version: number } };
          acked.push({ key, version: body.entry.version, seq });
        } catch {
          if (stop) cutOff += 1;
          return; // the server died mid-request: this write was never acknowledged
        }
      }
    });
    const before = acked.length;
    await killMoment(() => acked.length > before, 150, 600);
    server.child.kill('SIGKILL');
    stop = true;
    await Promise.all(writers);
    await server.exited;
    if (cutOff > 0) report.killedMidWrite += 1;
  }
  report.acknowledged = acked.length;
  return report;
};
