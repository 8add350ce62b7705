import type { Briefing, Entry, EntryValue, JudgedEntry } from 'cairn-memory-client';

/** Plain-text tables for people at a terminal; `--json` gives the API's own answer instead. */

const WIDEST = 60;

/**
 * Text as a terminal shows it harmlessly: every control character (C0, DEL and C1, U+0080 to
 * U+009F) but newline and tab written as an escape (`\u001b`), so that what any writer stored
 * cannot move the cursor, erase lines, retitle the window or set the clipboard (OSC 52).
 */
export const visible = (text: string): string =>
  text.replace(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);

/** One line, at most `max` characters: tables must not wrap or break on a newline in a value, nor pass a control character. */
export const oneLine = (text: string, max = WIDEST): string => {
  const flat = text.replace(/[\u0000-\u001f\u007f-\u009f]+/g, ' ');
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
};

export const preview = (value: EntryValue | undefined): string => (typeof value === 'string' ? value : JSON.stringify(value ?? null));

/** Columns padded to their widest cell, headers in capitals, two spaces between. */
export const table = (headers: readonly string[], rows: ReadonlyArray<readonly string[]>): string => {
  const cells = [headers.map((h) => h.toUpperCase()), ...rows.map((row) => row.map((c) => oneLine(c)))];
  const widths = headers.map((_, i) => Math.max(...cells.map((row) => (row[i] ?? '').length)));
  return cells.map((row) => row.map((c, i) => (i === row.length - 1 ? c : c.padEnd(widths[i] ?? 0))).join('  ').trimEnd()).join('\n');
};

/** A stored time as a table shows it: `2026-11-20 10:05:00Z`, or nothing for none. */
export const time = (iso: string | null): string => (iso ? iso.replace('T', ' ').replace(/\.\d+Z$/, 'Z') : '');

export const entriesTable = (entries: readonly Entry[]): string =>
  entries.length === 0
    ? '(no entries)'
    : table(
        ['entity_path', 'key', 'version', 'confidence', 'agent_id', 'written_at', 'value'],
        entries.map((e) => [e.entity_path, e.key, String(e.version), String(e.confidence), e.agent_id, time(e.written_at), preview(e.value)]),
      );

export const versionsTable = (versions: readonly Entry[]): string =>
  table(
    ['version', 'written_at', 'agent_id', 'confidence', 'state', 'value'],
    versions.map((e) => [String(e.version), time(e.written_at), e.agent_id, String(e.confidence), e.deleted ? 'deleted' : 'live', e.deleted ? '' : preview(e.value)]),
  );

/** One entry, field by field, with its value in full (pretty JSON for objects). */
export const entryDetail = (e: Entry): string => {
  const fields: Array<[string, string]> = [
    ['entity_path', e.entity_path],
    ['key', e.key],
    ['namespace', e.namespace],
    ['version', String(e.version)],
    ['confidence', String(e.confidence)],
    ['agent_id', e.agent_id],
    ['memory_type', e.memory_type],
    ['event_type', e.event_type ?? ''],
    ['tags', e.tags.join(', ')],
    ['created_at', time(e.created_at)],
    ['written_at', time(e.written_at)],
    ['expires_at', time(e.expires_at)],
  ];
  const width = Math.max(...fields.map(([k]) => k.length));
  // JSON escapes C0 characters itself, but not DEL or C1 ones.
  const value = visible(typeof e.value === 'string' ? e.value : JSON.stringify(e.value, null, 2));
  return `${fields.map(([k, v]) => `${k.padEnd(width)}  ${oneLine(v, 200)}`).join('\n')}\n\n${value}`;
};

const section = (title: string, rows: ReadonlyArray<readonly string[]>, headers: readonly string[]): string =>
  `${title}\n${rows.length === 0 ? '(none)' : table(headers, rows)}`;

/** A briefing as a person reads it: a heading, the overview, then one table per list. */
const JUDGED = ['entity_path', 'key', 'worked', 'failed', 'summary'];
const judged = (j: JudgedEntry): string[] => [j.entity_path, j.key, String(j.successes), String(j.failures), j.summary];

export const briefingText = (b: Briefing): string => {
  const cortex = b.cortex.compiled ? `cortex ${b.cortex.status}, compiled ${time(b.cortex.last_compiled_at)}` : `cortex ${b.cortex.status}, nothing compiled here yet`;
  const heading = `BRIEFING ${b.entity_path ?? `namespace ${b.namespace}`} ${b.as_of ? `as of ${time(b.as_of)}` : `at ${time(b.generated_at)}`} (${cortex}${b.truncated ? '; trimmed to fit' : ''})`;
  return [
    visible(heading) + (b.overview ? `\n${visible(b.overview)}` : ''),
    section('DIGESTS', b.digests.map((d) => [String(d.scope), String(d.type), String(d.headline)]), ['scope', 'type', 'headline']),
    section('OPEN ITEMS', b.open_items.map((i) => [i.kind, i.entity_path, i.key, i.status ?? '', time(i.since), i.title]), ['kind', 'entity_path', 'key', 'status', 'since', 'title']),
    section('RECENT CHANGES', b.recent_changes.map((c) => [time(c.written_at), c.agent_id, c.entity_path, c.key, String(c.version), c.summary]), ['written_at', 'agent_id', 'entity_path', 'key', 'version', 'summary']),
    section('PATTERNS', b.patterns.map((p) => [p.kind, p.entity_path, p.title]), ['kind', 'entity_path', 'title']),
    section('TRACES', b.traces.map((t) => [t.title, t.reason]), ['title', 'reason']),
    section('CONFIDENCE DROPS', b.confidence_drops.map((d) => [d.entity_path, d.key, String(d.from), String(d.to), d.by, d.reason]), ['entity_path', 'key', 'from', 'to', 'by', 'reason']),
    section('CONTESTED', (b.contested ?? []).map(judged), JUDGED),
    ...(b.tried_and_failed ? [section('TRIED AND FAILED', b.tried_and_failed.map(judged), JUDGED)] : []),
  ].join('\n\n');
};
