import { recheckEveryCycle } from './crash-depth.ts';
import { killMoment } from './kill-moment.ts';
import { type CairnProcess, spawnCairn } from './spawn-cairn.ts';

/**
 * The SIGKILL loop for batch writes: several clients each write batches over their own set
 * of entries (every batch gives every entry of the set its next version), the server is
 * killed -9 at a random moment and restarted, and then every entry of a set must hold exactly
 * the same batches: a batch is there on every entry or on none, and every acknowledged one is
 * there.
 */
export interface BatchCrashOptions {
  /** The backend's variables, kept across restarts. */
  env: Record<string, string>;
  cycles: number;
  writers: number;
  /** Entries per batch. */
  size: number;
}

export interface BatchCrashReport {
  acknowledged: number;
  /** Kills that cut off at least one batch the server had been sent and not yet answered. */
  killedMidBatch: number;
  /** Entries whose batches differ from their set's first entry (a torn batch). */
  torn: string[];
  /** Acknowledged batches missing after a restart. */
  lost: string[];
}

const seqsOf = async (url: string, path: string, key: string): Promise<number[]> => {
  const res = await fetch(`${url}/api/v1/history/${path}/${key}?limit=1000`);
  if (res.status === 404) return [];
  if (res.status !== 200) throw new Error(`history of ${path}/${key} answered ${res.status}`);
  const body = (await res.json()) as { versions: Array<{ value: { seq: number } }> };
  return body.versions.map((v) => v.value.seq).reverse();
};

/**
 * The sets' histories against a freshly started server. Every set is written in one cycle
 * only, and checked after the restart that follows it; `all` (the last start, and every start
 * at full depth) checks every set again, so that what later crashes did to earlier batches is
 * seen too.
 */
const check = async (url: string, sets: Map<string, number[]>, size: number, report: BatchCrashReport, cycle: number, all: boolean): Promise<void> => {
  const due = [...sets].filter(([path]) => all || path.startsWith(`batch-crash/c${cycle - 1}-`));
  const read = await Promise.all(due.map(([path]) => Promise.all(Array.from({ length: size }, (_, i) => seqsOf(url, path, `e${i}`)))));
  for (const [n, [path, acked]] of due.entries()) {
    const histories = read[n] as number[][];
    const first = JSON.stringify(histories[0]);
    for (const [i, h] of histories.entries()) {
      if (JSON.stringify(h) !== first && !report.torn.some((t) => t.startsWith(`${path}/`))) report.torn.push(`${path}/e${i}: ${JSON.stringify(h)} vs e0: ${first}`);
    }
    for (const seq of acked) if (!histories[0]?.includes(seq) && !report.lost.includes(`${path} batch ${seq}`)) report.lost.push(`${path} batch ${seq}`);
  }
};

export const batchCrashLoop = async (options: BatchCrashOptions): Promise<BatchCrashReport> => {
  const sets = new Map<string, number[]>();
  const report: BatchCrashReport = { acknowledged: 0, killedMidBatch: 0, torn: [], lost: [] };
  for (let cycle = 0; cycle <= options.cycles; cycle++) {
    const server: CairnProcess = await spawnCairn(options.env);
    await check(server.url, sets, options.size, report, cycle, cycle === options.cycles || recheckEveryCycle());
    if (cycle === options.cycles) {
      await server.stop();
      break;
    }
    let stop = false;
    let cutOff = 0;
    const before = report.acknowledged;
    const writers = Array.from({ length: options.writers }, async (_, w) => {
      const path = `batch-crash/c${cycle}-w${w}`;
      const acked: number[] = [];
      sets.set(path, acked);
      for (let seq = 0; !stop; seq++) {
        const entries = Array.from({ length: options.size }, (_, i) => ({ entity_path: path, key: `e${i}`, value: { seq, padding: 'x'.repeat(Math.floor(Math.random() * 2000)) } }));
        try {
          const res = await fetch(`${server.url}/api/v1/entries/batch`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ entries }) });
          if (res.status !== 200) throw new Error(`unexpected ${res.status}`);
          acked.push(seq);
          report.acknowledged++;
        } catch {
          if (stop) cutOff += 1;
          return; // the server died mid-request: this batch was never acknowledged
        }
      }
    });
    // On a loaded host an S3 batch can take longer than the whole random window (5 batches in
    // 8 cycles at load 9, where the test needs more batches than cycles).
    await killMoment(() => report.acknowledged !== before, 200, 800);
    server.child.kill('SIGKILL');
    stop = true;
    await Promise.all(writers);
    await server.exited;
    if (cutOff > 0) report.killedMidBatch += 1;
  }
  return report;
};
