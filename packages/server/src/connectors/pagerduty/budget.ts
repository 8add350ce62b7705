import { VALUE_BUDGET, bytesOf, keepWholeNewestFirst } from '../value-budget.ts';
import type { Fields } from '../lifecycle.ts';
import { clipText } from '../../domain/clip-text.ts';

/**
 * Keeping an incident's value within one entry's size (SPEC §3: 512 KiB). PagerDuty bounds a
 * note at 65,536 characters and the connector keeps up to 500 notes and 500 timeline entries,
 * so a busy incident can outgrow an entry; once it does, every later event about it — the
 * resolution too — would be refused on every retry, and the incident would stay in its last
 * state in Cairn for ever.
 */

/** What an older note keeps of its text once the whole of it does not fit: enough to tell what it was. */
export const NOTE_PREVIEW_CHARS = 200;

/** The counts of what the value leaves out, named as the value names them. */
export type OmittedCount = 'timeline_omitted' | 'notes_omitted';

export const listOf = (value: unknown): Fields[] =>
  Array.isArray(value) ? value.filter((item): item is Fields => item !== null && typeof item === 'object' && !Array.isArray(item)) : [];

export const countOf = (value: unknown): number => (typeof value === 'number' && Number.isSafeInteger(value) && value > 0 ? value : 0);

/** `{name: n}` when something was left out, else nothing: a value that lost nothing looks as it always did. */
export const counted = (name: OmittedCount, n: number): Partial<Record<OmittedCount, number>> => (n > 0 ? { [name]: n } : {});

/** Timeline entries and notes in time order, ties by id in code-unit order (the same on every replica). */
export const byTimeThenId = (a: Fields, b: Fields): number => {
  const [x, y] = [String(a.id), String(b.id)];
  return (Date.parse(String(a.at)) || 0) - (Date.parse(String(b.at)) || 0) || (x < y ? -1 : x > y ? 1 : 0);
};

/**
 * Whether `item` is older than everything `kept` still lists although older items were left
 * out: then it is one of those, delivered again (a replay after the dedup window), and adding
 * it back would count it twice and make a version that changes nothing.
 */
export const isAmongOmitted = (item: Fields, kept: readonly Fields[], omitted: number): boolean => {
  const oldest = kept[0];
  return omitted > 0 && oldest !== undefined && byTimeThenId(item, oldest) < 0;
};

/** A note's text cut to its first NOTE_PREVIEW_CHARS characters, saying how long it was. */
const previewOf = (note: Fields): Fields => {
  const content = note.content;
  if (typeof content !== 'string' || content.length <= NOTE_PREVIEW_CHARS) return note;
  return { ...note, content: clipText(content, NOTE_PREVIEW_CHARS), content_truncated: true, content_chars: content.length };
};

/**
 * The incident's value, made to fit when it has outgrown an entry:
 * 1. older notes keep only the start of their text (`content_truncated: true`, and the whole
 *    text's length as `content_chars`); the newest keep their whole text while it fits, as a
 *    Slack thread keeps its newest replies' texts. The newest note stays whole, unless it is
 *    the resolution note, which holds its whole text already;
 * 2. if even that is too large, the oldest timeline entries and notes (the two lists taken
 *    together, in time order) are left out and counted in `timeline_omitted` / `notes_omitted`.
 * Times, counts and the state stay whole, so every event still lands; the entry's earlier
 * versions keep what a later one leaves out. Only an event too large for an entry by itself
 * (a snapshot of thousands of responders; no real incident's) is still refused, and then only
 * that event: the next one builds on the value stored before it.
 */
export const fitIncident = (value: Fields): Fields => {
  if (bytesOf(value) <= VALUE_BUDGET) return value;
  const notes = listOf(value.notes);
  const newest = notes.at(-1);
  const resolvedBy = newest !== undefined && value.resolution_note === newest.content;
  const previews = notes.map((note) => (note === newest && !resolvedBy ? note : previewOf(note)));
  const skeleton = { ...value, notes: previews };
  const left = VALUE_BUDGET - bytesOf(skeleton);
  if (left >= 0) return { ...value, notes: keepWholeNewestFirst(notes, previews, left) };
  return leaveOutOldest(skeleton, -left);
};

/**
 * Leave out the oldest timeline entries and notes until `over` bytes are gone; never the
 * newest of either (the event that set the current state, the note that may be its resolution).
 */
const leaveOutOldest = (value: Fields, over: number): Fields => {
  const timeline = listOf(value.timeline);
  const notes = listOf(value.notes);
  const oldestFirst = [...timeline.slice(0, -1), ...notes.slice(0, -1)].sort(byTimeThenId);
  const gone = new Set<Fields>();
  for (const item of oldestFirst) {
    if (over <= 0) break;
    gone.add(item);
    over -= bytesOf(item) + 1; // and its comma
  }
  const keptTimeline = timeline.filter((t) => !gone.has(t));
  const keptNotes = notes.filter((n) => !gone.has(n));
  const { notes: _notes, resolution_note: resolutionNote, timeline_omitted: timelineOmitted, notes_omitted: notesOmitted, ...rest } = value;
  return {
    ...rest,
    timeline: keptTimeline,
    ...counted('timeline_omitted', countOf(timelineOmitted) + timeline.length - keptTimeline.length),
    ...counted('notes_omitted', countOf(notesOmitted) + notes.length - keptNotes.length),
    notes: keptNotes,
    resolution_note: resolutionNote ?? null,
  };
};
