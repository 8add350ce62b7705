import { VALUE_BUDGET, bytesOf } from '../value-budget.ts';
import { countOf, type Fields, isAmongOmitted } from '../lifecycle.ts';
import { clipText } from '../../domain/clip-text.ts';

export { countOf, isAmongOmitted };

/**
 * Keeping an incident's entry small. Every event about an incident (an acknowledgement, an
 * escalation, a note) makes a new version of the whole entry, so its size is what the
 * incident's history grows by per event: it lists the newest INCIDENT_NOTES notes and
 * INCIDENT_TIMELINE timeline entries (the rest counted in `notes_omitted` / `timeline_omitted`)
 * and keeps the notes' texts newest first within NOTE_TEXT_BYTES, some 50 KB in all with notes
 * of a few hundred words, not the 512 KiB value limit. Each note is whole in its own
 * `note-<id>` entry beside the incident's; the incident's entry is their summary.
 */

/** The newest notes an incident's entry lists; older ones are counted in `notes_omitted`. */
export const INCIDENT_NOTES = 50;

/** The newest timeline entries an incident's entry lists; older ones are counted in `timeline_omitted`. */
export const INCIDENT_TIMELINE = 100;

/**
 * Bytes of the older notes' texts an incident's entry keeps whole, newest first (32 KiB, as a
 * Slack thread keeps its replies'); the newest note's text is always whole beside them (it may
 * be the resolution note). The others keep their start (`content_truncated`).
 */
export const NOTE_TEXT_BYTES = 32 * 1024;

/** What an older note keeps of its text once the whole of it does not fit: enough to tell what it was. */
export const NOTE_PREVIEW_CHARS = 200;

/** The counts of what the value leaves out, named as the value names them. */
export type OmittedCount = 'timeline_omitted' | 'notes_omitted';

export const listOf = (value: unknown): Fields[] =>
  Array.isArray(value) ? value.filter((item): item is Fields => item !== null && typeof item === 'object' && !Array.isArray(item)) : [];

/** `{name: n}` when something was left out, else nothing: a value that lost nothing looks as it always did. */
export const counted = (name: OmittedCount, n: number): Partial<Record<OmittedCount, number>> => (n > 0 ? { [name]: n } : {});

/** Timeline entries and notes in time order, ties by id in code-unit order (the same on every replica). */
export const byTimeThenId = (a: Fields, b: Fields): number => {
  const [x, y] = [String(a.id), String(b.id)];
  return (Date.parse(String(a.at)) || 0) - (Date.parse(String(b.at)) || 0) || (x < y ? -1 : x > y ? 1 : 0);
};

/** A note's text cut to its first NOTE_PREVIEW_CHARS characters, saying how long it was. */
const previewOf = (note: Fields): Fields => {
  const content = note.content;
  if (typeof content !== 'string' || content.length <= NOTE_PREVIEW_CHARS) return note;
  return { ...note, content: clipText(content, NOTE_PREVIEW_CHARS), content_truncated: true, content_chars: content.length };
};

/**
 * The incident's value with its notes' texts bounded: the newest note keeps its whole text
 * (unless that is the resolution note, which holds it already, and the value would not fit);
 * older ones keep theirs newest first while they fit in NOTE_TEXT_BYTES, and none older than
 * the first that does not, or than one cut before (so the texts kept are the newest run,
 * whatever order the notes came in); the rest keep their first NOTE_PREVIEW_CHARS characters
 * (`content_truncated: true`, and the whole text's length as `content_chars`). Should even
 * that not fit an entry (a snapshot of thousands of responders; no real incident's), the
 * oldest timeline entries and notes (the two lists taken together, in time order) are left
 * out and counted in `timeline_omitted` / `notes_omitted`. Times, counts and the state stay
 * whole, so every event still lands; each note stays whole in its own entry. Only an event
 * too large for an entry by itself is still refused, and then only that event: the next one
 * builds on the value stored before it.
 */
export const fitIncident = (value: Fields): Fields => {
  const notes = listOf(value.notes);
  const kept = notes.map(previewOf);
  const newest = notes.length - 1;
  if (newest >= 0) kept[newest] = notes[newest] as Fields;
  let left = NOTE_TEXT_BYTES - bytesOf(notes[newest]?.content ?? '');
  for (let i = newest - 1; i >= 0 && left >= 0; i--) {
    const note = notes[i] as Fields;
    if (note.content_truncated === true) break;
    if (kept[i] === note) continue; // short enough to be its own preview
    const cost = bytesOf(note.content);
    if (cost > left) break;
    kept[i] = note;
    left -= cost;
  }
  const bounded = notes.length === 0 ? value : { ...value, notes: kept };
  if (bytesOf(bounded) <= VALUE_BUDGET) return bounded;
  // The resolution note holds the newest note's whole text already (notes.ts keeps it so).
  const last = notes[newest];
  const resolvedBy = last !== undefined && value.resolution_note === last.content;
  const smaller = resolvedBy ? { ...bounded, notes: kept.with(newest, previewOf(last)) } : bounded;
  const over = bytesOf(smaller) - VALUE_BUDGET;
  return over <= 0 ? smaller : leaveOutOldest(smaller, over);
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
