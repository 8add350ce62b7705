import type { Entry, EntryValue } from '../client/types.ts';

/** Plain-text tables for people at a terminal; `--json` gives the API's own answer instead. */

const WIDEST = 60;

/** One line, at most `max` characters: tables must not wrap or break on a newline in a value. */
export const oneLine = (text: string, max = WIDEST): string => {
  const flat = text.replace(/[\u0000-\u001f\u007f]+/g, ' ');
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
};

export const preview = (value: EntryValue | undefined): string => (typeof value === 'string' ? value : JSON.stringify(value ?? null));

/** Columns padded to their widest cell, headers in capitals, two spaces between. */
export const table = (headers: readonly string[], rows: ReadonlyArray<readonly string[]>): string => {
  const cells = [headers.map((h) => h.toUpperCase()), ...rows.map((row) => row.map((c) => oneLine(c)))];
  const widths = headers.map((_, i) => Math.max(...cells.map((row) => (row[i] ?? '').length)));
  return cells.map((row) => row.map((c, i) => (i === row.length - 1 ? c : c.padEnd(widths[i] ?? 0))).join('  ').trimEnd()).join('\n');
};

const time = (iso: string | null): string => (iso ? iso.replace('T', ' ').replace(/\.\d+Z$/, 'Z') : '');

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
  const value = typeof e.value === 'string' ? e.value : JSON.stringify(e.value, null, 2);
  return `${fields.map(([k, v]) => `${k.padEnd(width)}  ${oneLine(v, 200)}`).join('\n')}\n\n${value}`;
};

const looksLikeEntry = (x: unknown): x is Entry =>
  typeof x === 'object' && x !== null && typeof (x as Entry).entity_path === 'string' && typeof (x as Entry).key === 'string' && 'value' in x;

/**
 * A briefing, section by section. Its sections are the briefing service's to define, so
 * lists of entries become tables and anything else is shown as indented JSON.
 */
export const sections = (body: Record<string, unknown>): string =>
  Object.entries(body)
    .map(([name, content]) => {
      const items = Array.isArray(content) ? content : null;
      const entries = items?.map((item) => (looksLikeEntry(item) ? item : looksLikeEntry((item as { entry?: unknown } | null)?.entry) ? (item as { entry: Entry }).entry : null));
      const shown = entries && entries.length > 0 && entries.every((e) => e !== null) ? entriesTable(entries as Entry[]) : items?.length === 0 ? '(none)' : JSON.stringify(content, null, 2);
      return `${name.replace(/_/g, ' ').toUpperCase()}\n${shown}`;
    })
    .join('\n\n');
