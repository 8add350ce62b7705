import { LIMITS } from './limits.ts';

const MAX_DEPTH = 64;

/**
 * U+0000 is refused in stored text on every backend alike: PostgreSQL's jsonb cannot hold it,
 * and one backend refusing what another keeps would make data depend on where it lives.
 */
export const NUL_PROBLEM = 'must not contain the NUL character (U+0000)';
/** A lone UTF-16 surrogate has no UTF-8 form: PostgreSQL refuses it, and no file could hold it faithfully. */
export const SURROGATE_PROBLEM = 'must be valid Unicode (no lone surrogate such as \\ud800)';

/**
 * JSON's parser reads a number beyond a double's range (1e400) as Infinity, which no JSON can
 * hold: stored, it would read back as null. Refused instead, so nothing is changed silently.
 */
export const NUMBER_PROBLEM = 'must hold only numbers a double can represent (at most about 1.8e308 in size); send larger ones as strings';

/** Why free text (a search query, a string inside a value) cannot be stored or sent on, or null. */
export const textProblem = (s: string): string | null => (s.includes('\u0000') ? NUL_PROBLEM : s.isWellFormed() ? null : SURROGATE_PROBLEM);

/**
 * Why a JSON document (a value, a provenance) cannot be stored, or null: nesting deeper than
 * MAX_DEPTH (checked iteratively, so a hostile body cannot overflow the stack here; hashing,
 * indexing and encoding walk documents recursively), a U+0000 or a lone surrogate in a
 * string or key, or a number out of a double's range.
 */
export const structureProblem = (doc: unknown): string | null => {
  const stack: Array<[unknown, number]> = [[doc, 1]];
  while (stack.length > 0) {
    const [node, depth] = stack.pop() as [unknown, number];
    if (typeof node === 'string') {
      const problem = textProblem(node);
      if (problem) return problem;
      continue;
    }
    if (typeof node === 'number' && !Number.isFinite(node)) return NUMBER_PROBLEM;
    if (node === null || typeof node !== 'object') continue;
    if (depth > MAX_DEPTH) return `must not nest deeper than ${MAX_DEPTH} levels`;
    for (const [key, child] of Object.entries(node)) {
      const problem = textProblem(key);
      if (problem) return problem;
      stack.push([child, depth + 1]);
    }
  }
  return null;
};

/**
 * Why `value` is too large to store, or null. Its structure is the schema's to check (see
 * ValueSchema), which has already bounded the depth this stringifies.
 */
export const valueSizeProblem = (value: unknown, serialized?: string): string | null => {
  // `serialized`: the value's JSON when the caller has it already (any key order: same size).
  const bytes = Buffer.byteLength(typeof value === 'string' ? value : (serialized ?? JSON.stringify(value)), 'utf8');
  return bytes > LIMITS.valueBytes ? `must be at most ${LIMITS.valueBytes} bytes serialized (got ${bytes})` : null;
};
