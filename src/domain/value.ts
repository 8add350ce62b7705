import { LIMITS } from './limits.ts';

const MAX_DEPTH = 64;

/**
 * Why `value` cannot be stored, or null. Depth is bounded (iteratively, so a hostile body
 * cannot overflow the stack here) because hashing and indexing walk the value recursively.
 * Returns the serialized size so callers need not stringify twice.
 */
export const valueProblem = (value: unknown): { problem: string; tooLarge: boolean } | { bytes: number } => {
  if (typeof value !== 'string') {
    const stack: Array<[unknown, number]> = [[value, 1]];
    while (stack.length > 0) {
      const [node, depth] = stack.pop() as [unknown, number];
      if (node === null || typeof node !== 'object') continue;
      if (depth > MAX_DEPTH) return { problem: `must not nest deeper than ${MAX_DEPTH} levels`, tooLarge: false };
      for (const child of Object.values(node)) stack.push([child, depth + 1]);
    }
  }
  const bytes = Buffer.byteLength(typeof value === 'string' ? value : JSON.stringify(value), 'utf8');
  if (bytes > LIMITS.valueBytes) {
    return { problem: `must be at most ${LIMITS.valueBytes} bytes serialized (got ${bytes})`, tooLarge: true };
  }
  return { bytes };
};
