import type { Briefing } from 'cairn-memory-client';

/**
 * Fitting a briefing into a prompt budget: measured as the length of its JSON, trimmed from
 * the least essential end. Digest facts go first (their headlines stay), then each list loses
 * its oldest items in turn, longest list first, and last the overview is cut short, until the
 * whole fits: it always does, unless the answer's identification alone (a long namespace,
 * entity path and agent id, echoed as asked) is longer than the cap.
 */

/** The two fields fitting adds to the answer (declared with the rest of `Briefing`, in the client). */
export type Sized = Pick<Briefing, 'truncated' | 'size_chars'>;

const size = (value: unknown): number => JSON.stringify(value).length;

export const fitToBudget = <T extends { digests: Array<Record<string, unknown>>; overview?: string | null }>(briefing: T, maxChars: number, lists: Array<keyof T & string>): T & Sized => {
  let truncated = false;
  // Measured with a six-digit size in place, the widest the cap allows, so the final figure fits too.
  const measure = () => size({ ...briefing, truncated, size_chars: 100_000 });
  if (measure() > maxChars) {
    truncated = true;
    briefing.digests = briefing.digests.map(({ facts: _facts, ...rest }) => rest);
  }
  while (measure() > maxChars) {
    let longest: (keyof T & string) | null = null;
    for (const name of lists) {
      const list = briefing[name] as unknown as unknown[] | undefined;
      // A list the caller did not ask for (tried_and_failed) is absent, not empty.
      if (list !== undefined && list.length > 0 && (longest === null || size(list) > size(briefing[longest]))) longest = name;
    }
    if (longest === null) break;
    (briefing[longest] as unknown as unknown[]).pop();
  }
  // Lists empty and still too long: the overview headline is all of the rest that is not the
  // answer's own identification (namespace, path, times), so it is cut short, with an
  // ellipsis, to the most whole characters (code points) that fit, escapes counted as JSON
  // counts them; left out when not one fits.
  if (measure() > maxChars && typeof briefing.overview === 'string') {
    const points = [...briefing.overview];
    const cut = (keep: number): string => `${points.slice(0, keep).join('')}…`;
    let low = 0;
    let high = points.length - 1;
    while (low < high) {
      const mid = Math.ceil((low + high) / 2);
      briefing.overview = cut(mid);
      if (measure() <= maxChars) low = mid;
      else high = mid - 1;
    }
    briefing.overview = low > 0 ? cut(low) : null;
  }
  const out = { ...briefing, truncated, size_chars: 0 };
  const bare = size(out) - 1;
  out.size_chars = bare + String(bare).length;
  if (String(out.size_chars).length !== String(bare).length) out.size_chars += 1;
  return out;
};
