import type { EntryValue } from '../../domain/entry.ts';
import type { Remembered } from '../connector.ts';
import { type Fields, fieldsOf, MAX_TIMELINE } from '../lifecycle.ts';
import type { Envelope, Note } from './payloads.ts';

/** One note as the incident's entry keeps it. */
export interface NoteFields extends Fields {
  id: string;
  at: string;
  by: string | null;
  content: string;
}

/** The held item or note list entry for an annotation; its id is PagerDuty's note id, else the event's. */
export const noteOf = (event: Envelope['event'], note: Note): Remembered & { data: NoteFields } => {
  const id = note.id ?? event.id;
  return { id, data: { id, at: new Date(Date.parse(event.occurred_at)).toISOString(), by: event.agent?.summary ?? null, content: note.content } };
};

export const isNote = (item: unknown): item is NoteFields => {
  const f = fieldsOf(item as EntryValue);
  return f !== null && typeof f.id === 'string' && typeof f.at === 'string' && typeof f.content === 'string';
};

/**
 * Add notes to an incident's value: each once (by id), in time order, bounded like the
 * timeline. `resolution_note` is the last note of a resolved incident — responders write the
 * resolution last — and null while it is open. Order-independent and idempotent, so a note
 * and the incident's events converge however they arrive.
 */
export const withNotes = (value: Fields, added: readonly NoteFields[]): Fields => {
  const known = Array.isArray(value.notes) ? value.notes.filter(isNote) : [];
  const byId = new Map<string, NoteFields>(known.map((n) => [n.id, n]));
  for (const note of added) if (!byId.has(note.id)) byId.set(note.id, note);
  const notes = [...byId.values()].sort((a, b) => Date.parse(a.at) - Date.parse(b.at) || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)).slice(-MAX_TIMELINE);
  const last = notes.at(-1);
  // Always last, so the value's shape does not depend on which event arrived first.
  const { notes: _notes, resolution_note: _note, ...rest } = value;
  return { ...rest, notes, resolution_note: value.status === 'resolved' && last ? last.content : null };
};

/** Fold notes into whatever the incident's entry holds now (nothing yet: a value of notes alone). */
export const applyNotes = (current: EntryValue | null, notes: readonly NoteFields[]): Fields => withNotes(fieldsOf(current) ?? {}, notes);
