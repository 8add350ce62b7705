import { z } from 'zod';
import { LIMITS } from './limits.ts';

// C0, DEL and C1 control characters. Also the Unicode line/paragraph separators and BOM,
// which render invisibly and are a favourite for spoofing paths in logs and UIs.
const CONTROL = /[\u0000-\u001f\u007f-\u009f\u2028\u2029\ufeff]/;

/**
 * The bound on a name's length, as counted: in UTF-16 code units, as JavaScript counts a
 * string, so a character beyond U+FFFF (most emoji) counts as two. Counting code points would
 * let names twice as long in UTF-8 through, past what PostgreSQL's index on them holds.
 */
const atMost = (max: number, what = 'must be'): string => `${what} at most ${max} characters (UTF-16 code units: an emoji counts as two)`;

/** Whether a string holds a lone UTF-16 surrogate, which has no UTF-8 form and breaks storage. */
const hasLoneSurrogate = (s: string): boolean => !s.isWellFormed();

/**
 * Entity path rules of SPEC §3: 1–32 segments joined by `/`, each 1–128 characters, total
 * ≤ 512, no empty / `.` / `..` segment, no control characters. The message names the rule so
 * an agent can fix its input.
 */
export const entityPathProblem = (path: string): string | null => {
  if (path.length === 0) return 'must not be empty';
  if (path.length > LIMITS.entityPathChars) return atMost(LIMITS.entityPathChars);
  if (CONTROL.test(path)) return 'must not contain control characters';
  if (hasLoneSurrogate(path)) return 'must be valid Unicode';
  if (path.startsWith('/') || path.endsWith('/')) return 'must not start or end with "/"';
  const segments = path.split('/');
  if (segments.length > LIMITS.entityPathSegments) return `must have at most ${LIMITS.entityPathSegments} segments`;
  for (const segment of segments) {
    if (segment.length === 0) return 'must not contain an empty segment ("//")';
    if (segment === '.' || segment === '..') return 'must not contain "." or ".." segments';
    if (segment.length > LIMITS.segmentChars) return atMost(LIMITS.segmentChars, 'segments must be');
    if (segment.trim() !== segment) return 'segments must not start or end with whitespace';
  }
  return null;
};

/** Key rules of SPEC §3: 1–256 characters, no control characters. Any key that may be stored. */
export const keyProblem = (key: string): string | null => {
  if (key.length === 0) return 'must not be empty';
  if (key.length > LIMITS.keyChars) return atMost(LIMITS.keyChars);
  if (CONTROL.test(key)) return 'must not contain control characters';
  if (hasLoneSurrogate(key)) return 'must be valid Unicode';
  return null;
};

/**
 * A key a write may give an entry: also not `.` or `..` (a tightening of SPEC §3). URL
 * clients resolve such a last segment away (`…/entries/repos/acme/..` becomes
 * `…/entries/repos/`, percent-encoded or not), so the entry could be written but not read or
 * deleted by its URL. Reads, deletes and forgets take any stored key (keyProblem): an entry
 * written before this rule can still be reached where a body names it.
 */
export const newKeyProblem = (key: string): string | null =>
  keyProblem(key) ?? (key === '.' || key === '..' ? 'must not be "." or ".." (a URL cannot name such an entry)' : null);

/** A short label (agent id, namespace, event type, tag): printable, bounded. */
const labelProblem = (max: number) => (s: string): string | null => {
  if (s.length === 0) return 'must not be empty';
  if (s.length > max) return atMost(max);
  if (CONTROL.test(s)) return 'must not contain control characters';
  if (hasLoneSurrogate(s)) return 'must be valid Unicode';
  return null;
};

const checked = (problem: (s: string) => string | null, description: string) =>
  z
    .string()
    .superRefine((s, ctx) => {
      const p = problem(s);
      if (p) ctx.addIssue({ code: 'custom', message: p });
    })
    .describe(description);

export const EntityPathSchema = checked(
  entityPathProblem,
  'Slash-separated path naming the entity, e.g. "repos/acme/api" or "incidents/pagerduty/checkout".',
);
export const KeySchema = checked(keyProblem, 'Name of the entry under its entity path, e.g. "pr-42". May contain "/".');
export const NewKeySchema = checked(newKeyProblem, 'Name of the entry under its entity path, e.g. "pr-42". May contain "/"; not "." or "..".');
export const AgentIdSchema = checked(labelProblem(LIMITS.agentIdChars), 'Identity of the writer, e.g. "triage-bot".');
export const EventTypeSchema = checked(labelProblem(LIMITS.eventTypeChars), 'Dotted type label, e.g. "pull_request.merged".');
export const NamespaceSchema = checked(labelProblem(LIMITS.namespaceChars), 'Namespace the entry lives in.');
export const TagSchema = checked(labelProblem(LIMITS.tagChars), 'A free-form tag.');

/**
 * Any other short name or filter text (a key's name, a team member, an event id, a digest
 * scope): printable and valid Unicode, so every backend takes it alike (PostgreSQL refuses
 * U+0000 and lone surrogates in text).
 */
export const labelSchema = (max: number, description: string) => checked(labelProblem(max), description);

/** Segment-wise prefix test: `repos/acme` covers `repos/acme` and `repos/acme/api`, not `repos/acme-corp`. */
export const pathHasPrefix = (path: string, prefix: string): boolean =>
  path === prefix || (path.startsWith(prefix) && path.charCodeAt(prefix.length) === 47 /* "/" */);

/**
 * A namespace as one segment of a shared record's collection name or id, where more
 * "/"-separated parts follow it (`dedup/<namespace>/<connector>`, a retention policy's
 * `<namespace>/<path>`). Namespaces are free labels and may hold "/", so `acme/events` +
 * `github` and `acme` + `events/github` would name the same thing: "%" becomes "%25" and "/"
 * becomes "%2F", so the segment holds no "/" and two namespaces never share one. A namespace
 * with neither is itself, so the names a store already holds for it stay as they are.
 */
export const namespaceSegment = (namespace: string): string => namespace.replaceAll('%', '%25').replaceAll('/', '%2F');

/** The namespace a segment namespaceSegment made stands for (the inverse: "%2F" is "/", "%25" is "%"). */
export const namespaceOfSegment = (segment: string): string => segment.replace(/%2F|%25/g, (m) => (m === '%2F' ? '/' : '%'));
