import { createHash } from 'node:crypto';
import type { EntryValue } from '../../domain/entry.ts';
import type { MappedWrite, Remembered } from '../connector.ts';
import { type Fields, fieldsOf } from '../lifecycle.ts';
import { byTimeThenId, countOf, counted, fitIncident, INCIDENT_NOTES, isAmongOmitted } from './budget.ts';
import { type Envelope, MAX_NOTE_CHARS, type Note } from './payloads.ts';

/** One note as the incident's entry keeps it (budget.ts may cut an older one's text). */
export interface NoteFields extends Fields {
  id: string;
  at: string;
  by: string | null;
  content: string;
  content_truncated?: true;
  content_chars?: number;
}

/** The held item or note list entry for an annotation; its id is PagerDuty's note id, else the event's. */
export const noteOf = (event: Envelope['event'], note: Note): Remembered & { data: NoteFields } => {
  const id = note.id ?? event.id;
  return { id, data: { id, at: new Date(Date.parse(event.occurred_at)).toISOString(), by: event.agent?.summary ?? null, content: note.content } };
};

/** A note as this connector builds it; a longer text than PagerDuty sends (a held item an archive brought) is none. */
export const isNote = (item: unknown): item is NoteFields => {
  const f = fieldsOf(item as EntryValue);
  return f !== null && typeof f.id === 'string' && typeof f.at === 'string' && typeof f.content === 'string' && f.content.length <= MAX_NOTE_CHARS;
};

/**
 * Add notes to an incident's value: each once (by id), in time order, the newest
 * INCIDENT_NOTES listed (the oldest let go are counted in `notes_omitted`; each is whole in
 * its own `note-<id>` entry). A note older than every listed one once some were let go is
 * taken for one of those, delivered again, and left to its own entry. `resolution_note` is
 * the last note of a resolved incident — responders write the resolution last — and null
 * while it is open. Order-independent and idempotent (within the listed notes), so a note and
 * the incident's events converge however they arrive.
 */
export const withNotes = (value: Fields, added: readonly NoteFields[]): Fields => {
  const known = Array.isArray(value.notes) ? value.notes.filter(isNote) : [];
  const omitted = countOf(value.notes_omitted);
  const byId = new Map<string, NoteFields>(known.map((n) => [n.id, n]));
  for (const note of added) if (!byId.has(note.id) && !isAmongOmitted(note, known, omitted)) byId.set(note.id, note);
  const all = [...byId.values()].sort(byTimeThenId);
  const notes = all.slice(-INCIDENT_NOTES);
  const last = notes.at(-1);
  // Always last, so the value's shape does not depend on which event arrived first.
  const { notes: _notes, resolution_note: _note, notes_omitted: _omitted, ...rest } = value;
  return {
    ...rest,
    ...counted('notes_omitted', omitted + all.length - notes.length),
    notes,
    resolution_note: value.status === 'resolved' && last ? resolutionNoteOf(value, last) : null,
  };
};

/**
 * The last note's text. When budget.ts had to cut that note's own copy (a long resolution
 * beside many other notes), the resolution note held so far is still its whole text: keep it.
 */
const resolutionNoteOf = (value: Fields, last: NoteFields): string => {
  const held = value.resolution_note;
  const whole = last.content_truncated && typeof held === 'string' && held.length === last.content_chars && held.startsWith(last.content);
  return whole ? held : last.content;
};

/** Fold notes into whatever the incident's entry holds now (nothing yet: a value of notes alone), within an entry's size. */
export const applyNotes = (current: EntryValue | null, notes: readonly NoteFields[]): Fields => fitIncident(withNotes(fieldsOf(current) ?? {}, notes));

/**
 * A note's own entry key: `note-<PagerDuty's note id>`; an id PagerDuty would not send (the
 * event's id, used when a note has none) by its digest, so the key is always a valid one.
 */
export const noteKey = (id: string): string =>
  /^[A-Za-z0-9_.:-]{1,128}$/.test(id) ? `note-${id}` : `note-sha256-${createHash('sha256').update(id).digest('hex').slice(0, 32)}`;

/**
 * The note's own entry, beside its incident's (`note-<id>` on the incident's path): the whole
 * text, whatever the incident's entry keeps of it. Written once: the note stored under that key
 * stays (the incident's list keeps the first of a note id, too), so a redelivery makes no version.
 */
export const noteWrite = (entityPath: string, incidentId: string, note: NoteFields): MappedWrite => {
  const value: Fields = { id: note.id, incident_id: incidentId, incident_key: `incident-${incidentId}`, at: note.at, by: note.by, content: note.content };
  return {
    entity_path: entityPath,
    key: noteKey(note.id),
    event_type: 'incident.annotated',
    confidence: 1,
    update: (current) => {
      const stored = fieldsOf(current);
      return stored !== null && stored.id === note.id && typeof stored.content === 'string' ? stored : value;
    },
  };
};
