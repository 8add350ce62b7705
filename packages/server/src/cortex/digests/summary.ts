import type { Entry } from '../../domain/entry.ts';
import { DIGEST_LIMITS, type RecentChange, type Summary } from '../digest-types.ts';
import { canonicalOrder, newestByTime, shortText } from '../fields.ts';
import { isSourceWriter } from '../scopes.ts';

const round = (n: number): number => Math.round(n * 10_000) / 10_000;

type WriterCount = { agent_id: string; entries: number };

const byCount = (a: [string, number], b: [string, number]): number => b[1] - a[1] || (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0);

/**
 * `writers` (top 10) and, when it leaves some out, `sources` (every source writer,
 * `external/<source>`, with its count) of these counts: source digests roll up every path
 * their source wrote to, however many busier agents wrote there too.
 */
const writerFields = (counts: Map<string, number>): { writers: WriterCount[]; sources?: WriterCount[] } => {
  const all = [...counts].sort(byCount).map(([agent_id, entries]) => ({ agent_id, entries }));
  const writers = all.slice(0, DIGEST_LIMITS.writers);
  return all.length > writers.length ? { writers, sources: all.filter((w) => isSourceWriter(w.agent_id)) } : { writers };
};

/** Every source writer of a summary with its count, including those the top 10 leaves out. */
export const sourceWriters = (s: Summary): WriterCount[] => s.sources ?? s.writers.filter((w) => isSourceWriter(w.agent_id));

/**
 * What every digest carries, whatever its type (and all a generic path gets): how many live
 * entries, their keys, who wrote them, how much they are trusted, and the latest change.
 */
export const summarize = (entries: Entry[]): Summary => {
  const counts = new Map<string, number>();
  let min = 1;
  let max = 0;
  let sum = 0;
  let belowHalf = 0;
  let last: Entry | null = null;
  for (const e of entries) {
    min = Math.min(min, e.confidence);
    max = Math.max(max, e.confidence);
    sum += e.confidence;
    if (e.confidence < 0.5) belowHalf += 1;
    if (last === null || e.written_at > last.written_at) last = e;
    counts.set(e.agent_id, (counts.get(e.agent_id) ?? 0) + 1);
  }
  const { writers, sources } = writerFields(counts);
  return {
    entries: entries.length,
    keys: entries.slice(0, DIGEST_LIMITS.keys).map((e) => e.key),
    keys_truncated: entries.length > DIGEST_LIMITS.keys,
    writers,
    confidence: entries.length === 0 ? null : { min: round(min), max: round(max), mean: round(sum / entries.length), below_half: belowHalf },
    last_change: last === null ? null : { entity_path: last.entity_path, key: last.key, version: last.version, agent_id: last.agent_id, event_type: last.event_type, written_at: last.written_at },
    ...(sources ? { sources } : {}),
  };
};

/** The newest current versions, one line each. */
export const recentChanges = (entries: Entry[]): RecentChange[] =>
  newestByTime(entries, (e) => e.written_at, DIGEST_LIMITS.recent).map((e) => ({
    entity_path: e.entity_path, key: e.key, version: e.version, agent_id: e.agent_id, event_type: e.event_type,
    written_at: e.written_at, confidence: e.confidence, summary: shortText(e.value),
  }));

/** Whether change `a` is later than `b` (written_at), ties by what they quote: not by which part came first. */
const newerChange = (a: NonNullable<Summary['last_change']>, b: Summary['last_change']): boolean =>
  b === null || a.written_at > b.written_at || (a.written_at === b.written_at && canonicalOrder(a, b) < 0);

/**
 * Summaries of several scopes as one, kept in a form that merges again (see SummaryParts): the
 * sums, the extremes, the latest change and every writer's count.
 */
export class SummaryParts {
  private entries = 0;
  /** Σ mean × entries, the means in ten-thousandths (as rounded): an exact integer, whatever the order of adding. */
  private weighted = 0;
  private belowHalf = 0;
  private min = 1;
  private max = 0;
  private last: Summary['last_change'] = null;
  private readonly writers = new Map<string, number>();

  /** Adds these summaries, in order. */
  add(all: Iterable<Summary>): this {
    for (const s of all) {
      this.entries += s.entries;
      const listed = new Set(s.writers.map((w) => w.agent_id));
      for (const w of [...s.writers, ...sourceWriters(s).filter((w) => !listed.has(w.agent_id))]) this.writers.set(w.agent_id, (this.writers.get(w.agent_id) ?? 0) + w.entries);
      if (s.confidence) {
        this.weighted += Math.round(s.confidence.mean * 10_000) * s.entries;
        this.belowHalf += s.confidence.below_half;
        this.min = Math.min(this.min, s.confidence.min);
        this.max = Math.max(this.max, s.confidence.max);
      }
      if (s.last_change && newerChange(s.last_change, this.last)) this.last = s.last_change;
    }
    return this;
  }

  /** Adds what other parts hold, in order (after what this one holds). */
  join(others: Iterable<SummaryParts>): this {
    for (const o of others) {
      this.entries += o.entries;
      this.weighted += o.weighted;
      this.belowHalf += o.belowHalf;
      this.min = Math.min(this.min, o.min);
      this.max = Math.max(this.max, o.max);
      if (o.last && newerChange(o.last, this.last)) this.last = o.last;
      for (const [agent, n] of o.writers) this.writers.set(agent, (this.writers.get(agent) ?? 0) + n);
    }
    return this;
  }

  /** Keys become `<path>/<key>`-free counts only; source writers count exactly (from `sources` where a scope's top 10 left them out). */
  summary(): Summary {
    const { entries } = this;
    const { writers: top, sources } = writerFields(this.writers);
    return {
      entries,
      keys: [],
      keys_truncated: entries > 0,
      writers: top,
      confidence: entries === 0 ? null : { min: round(this.min), max: round(this.max), mean: Math.round(this.weighted / entries) / 10_000, below_half: this.belowHalf },
      last_change: this.last,
      ...(sources ? { sources } : {}),
    };
  }
}

/** Summaries of several scopes as one (see SummaryParts). */
export const mergeSummaries = (all: Summary[]): Summary => new SummaryParts().add(all).summary();

export const summaryHeadline = (s: Summary): string =>
  `${s.entries} entries by ${s.writers.map((w) => w.agent_id).join(', ') || 'nobody'}` +
  (s.confidence ? `; confidence ${s.confidence.min}–${s.confidence.max} (mean ${s.confidence.mean})` : '') +
  (s.last_change ? `; last change ${s.last_change.key} v${s.last_change.version} by ${s.last_change.agent_id} at ${s.last_change.written_at}` : '');
