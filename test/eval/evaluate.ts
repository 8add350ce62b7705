import type { EvalQuery } from './corpus/index.ts';

export type Mode = 'hybrid' | 'text' | 'vector';
export const MODES: Mode[] = ['hybrid', 'text', 'vector'];

export interface Scores {
  /** Mean share of each query's expected entries found in the top 5. */
  recall5: number;
  /** The same in the top 10. */
  recall10: number;
  /** Mean reciprocal rank of the first expected entry in the top 10 (0 when absent). */
  mrr: number;
  queries: number;
}

/** Per mode, per query kind (and `all`), in the order the kinds first appear. */
export type Report = Record<Mode, Record<string, Scores>>;

/** A search as the evaluation runs it: the query, the mode, the entity path it is asked within. */
export type Search = (query: string, mode: Mode, scope: string | undefined) => Promise<string[]>;

/** Runs every query in each mode through `search` (which answers `entity_path/key` ids, best first). */
export const evaluate = async (queries: EvalQuery[], search: Search, modes: Mode[] = MODES, concurrency = 8): Promise<Report> => {
  const report = {} as Report;
  const kinds = [...new Set(queries.map((q) => q.kind))];
  for (const mode of modes) {
    const per: { kind: string; recall5: number; recall10: number; rr: number }[] = [];
    let next = 0;
    const worker = async () => {
      while (next < queries.length) {
        const q = queries[next++] as EvalQuery;
        const ids = await search(q.query, mode, q.scope);
        const found = (n: number) => {
          const top = new Set(ids.slice(0, n));
          return q.expected.filter((e) => top.has(e)).length / q.expected.length;
        };
        const rank = ids.slice(0, 10).findIndex((id) => q.expected.includes(id));
        per.push({ kind: q.kind, recall5: found(5), recall10: found(10), rr: rank < 0 ? 0 : 1 / (rank + 1) });
      }
    };
    await Promise.all(Array.from({ length: concurrency }, worker));
    const scores = (rows: typeof per): Scores => ({
      recall5: rows.reduce((s, r) => s + r.recall5, 0) / (rows.length || 1),
      recall10: rows.reduce((s, r) => s + r.recall10, 0) / (rows.length || 1),
      mrr: rows.reduce((s, r) => s + r.rr, 0) / (rows.length || 1),
      queries: rows.length,
    });
    report[mode] = { all: scores(per) };
    for (const kind of kinds) report[mode][kind] = scores(per.filter((r) => r.kind === kind));
  }
  return report;
};

/** One table per report: a row per mode, for each kind recall@5, recall@10 and MRR. */
export const formatReport = (title: string, report: Report): string => {
  const modes = MODES.filter((m) => report[m]);
  const kinds = Object.keys(report[modes[0] as Mode] ?? {});
  const cell = (s: Scores | undefined) => (s ? `${s.recall5.toFixed(3)} ${s.recall10.toFixed(3)} ${s.mrr.toFixed(3)}` : '');
  const lines = [`${title}`, `  ${'mode'.padEnd(7)} ${kinds.map((k) => `${k} (R@5 R@10 MRR)`.padEnd(20)).join(' | ')}`];
  for (const mode of modes) lines.push(`  ${mode.padEnd(7)} ${kinds.map((k) => cell(report[mode][k]).padEnd(20)).join(' | ')}`);
  return lines.join('\n');
};
