import type { EvalQuery, QueryKind } from './corpus/index.ts';

export type Mode = 'hybrid' | 'text' | 'vector';
export const MODES: Mode[] = ['hybrid', 'text', 'vector'];

export interface Scores {
  /** Mean share of each query's expected entries found in the top 5. */
  recall5: number;
  /** Mean reciprocal rank of the first expected entry in the top 10 (0 when absent). */
  mrr: number;
  queries: number;
}

export type Report = Record<Mode, Record<QueryKind | 'all', Scores>>;

/** Runs every query in every mode through `search` (which answers `entity_path/key` ids, best first). */
export const evaluate = async (queries: EvalQuery[], search: (query: string, mode: Mode) => Promise<string[]>, concurrency = 8): Promise<Report> => {
  const report = {} as Report;
  for (const mode of MODES) {
    const per: { kind: QueryKind; recall: number; rr: number }[] = [];
    let next = 0;
    const worker = async () => {
      while (next < queries.length) {
        const q = queries[next++] as EvalQuery;
        const ids = await search(q.query, mode);
        const top5 = new Set(ids.slice(0, 5));
        const recall = q.expected.filter((e) => top5.has(e)).length / q.expected.length;
        const rank = ids.slice(0, 10).findIndex((id) => q.expected.includes(id));
        per.push({ kind: q.kind, recall, rr: rank < 0 ? 0 : 1 / (rank + 1) });
      }
    };
    await Promise.all(Array.from({ length: concurrency }, worker));
    const scores = (rows: typeof per): Scores => ({
      recall5: rows.reduce((s, r) => s + r.recall, 0) / (rows.length || 1),
      mrr: rows.reduce((s, r) => s + r.rr, 0) / (rows.length || 1),
      queries: rows.length,
    });
    report[mode] = {
      all: scores(per),
      lexical: scores(per.filter((r) => r.kind === 'lexical')),
      keyword: scores(per.filter((r) => r.kind === 'keyword')),
      paraphrase: scores(per.filter((r) => r.kind === 'paraphrase')),
    };
  }
  return report;
};

export const formatReport = (backend: string, report: Report): string => {
  const lines = [`${backend.padEnd(11)} mode     all R@5  MRR   | lexical R@5  MRR | keyword R@5  MRR | paraphrase R@5  MRR`];
  for (const mode of MODES) {
    const r = report[mode];
    const f = (s: Scores) => `${s.recall5.toFixed(3)} ${s.mrr.toFixed(3)}`;
    lines.push(`${''.padEnd(11)} ${mode.padEnd(8)} ${f(r.all)}   |     ${f(r.lexical)}  |     ${f(r.keyword)}  |        ${f(r.paraphrase)}`);
  }
  return lines.join('\n');
};
