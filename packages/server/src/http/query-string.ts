/** Set on a parsed query holding a malformed percent-encoding; request-hooks.ts refuses it (400). */
export const MALFORMED_QUERY = Symbol('malformed query');

const decode = (text: string): string | null => {
  const spaced = text.includes('+') ? text.replace(/\+/g, ' ') : text;
  if (!spaced.includes('%')) return spaced;
  try {
    return decodeURIComponent(spaced);
  } catch {
    return null;
  }
};

/**
 * The query string as fastify's own parser (fast-querystring) reads it — "+" a space, a name
 * given twice an array, a name without "=" the empty string, on an object without a prototype —
 * but strict about percent-encoding: that parser kept a malformed one as written, so
 * `?entity_path=q/%C0%AF` named the path `q/%C0%AF` literally, and `%ZZ`, `%FF` or an encoded
 * lone surrogate were read as text. A malformed query is marked (MALFORMED_QUERY) rather than
 * thrown: the router calls this before any hook, where an exception is no answer.
 */
export const parseQuery = (text: string): Record<string, string | string[]> => {
  const result = Object.create(null) as Record<string | symbol, string | string[] | boolean>;
  if (text.length === 0) return result as Record<string, string | string[]>;
  for (const part of text.split('&')) {
    if (part.length === 0) continue;
    const eq = part.indexOf('=');
    const name = decode(eq < 0 ? part : part.slice(0, eq));
    const value = eq < 0 ? '' : decode(part.slice(eq + 1));
    if (name === null || value === null) {
      const malformed = Object.create(null) as Record<string | symbol, unknown>;
      Object.defineProperty(malformed, MALFORMED_QUERY, { value: true, enumerable: false });
      return malformed as Record<string, string | string[]>;
    }
    const current = result[name];
    if (current === undefined) result[name] = value;
    else if (Array.isArray(current)) current.push(value);
    else result[name] = [current as string, value];
  }
  return result as Record<string, string | string[]>;
};

/** Whether the request's query was refused by parseQuery. */
export const queryMalformed = (query: unknown): boolean => typeof query === 'object' && query !== null && MALFORMED_QUERY in query;
