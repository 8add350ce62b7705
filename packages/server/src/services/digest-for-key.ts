import type { Digest } from '../cortex/digest-types.ts';
import { definitionOf } from '../cortex/digests/registry.ts';
import { pathVisible } from './authorize.ts';
import type { Context } from './context.ts';

/** Whether `value` names, at any depth, an entity path `hidden` says the caller may not see. */
const quotesHidden = (value: unknown, hidden: (path: string) => boolean): boolean => {
  if (Array.isArray(value)) return value.some((v) => quotesHidden(v, hidden));
  if (value === null || typeof value !== 'object') return false;
  for (const [field, v] of Object.entries(value)) {
    if (field === 'entity_path' && typeof v === 'string' && hidden(v)) return true;
    if (quotesHidden(v, hidden)) return true;
  }
  return false;
};

/**
 * A path digest as the calling key may see it. A key confined to path prefixes sees the
 * digests of its paths (digestVisible), but a digest may quote entries elsewhere: a chat
 * digest names the open incidents its threads discuss, with their titles and status. For such
 * a key, the facts and open items that name an entry it may not read are left out, and the
 * headline is made again from the facts that are left; a key of the whole namespace sees the
 * digest as compiled.
 */
export const digestForKey = (ctx: Context): ((d: Digest) => Digest) => {
  if ((ctx.access?.prefixes ?? null) === null) return (d) => d;
  const hidden = (path: string): boolean => !pathVisible(ctx, path);
  const keep = (item: unknown): boolean => !quotesHidden(item, hidden);
  return (d) => {
    if (d.kind !== 'path') return d;
    let cut = false;
    const facts: Record<string, unknown> = {};
    for (const [name, value] of Object.entries(d.facts)) {
      const kept = Array.isArray(value) ? value.filter(keep) : value;
      if (Array.isArray(value) && (kept as unknown[]).length !== value.length) cut = true;
      facts[name] = kept;
    }
    const open_items = d.open_items.filter(keep);
    if (!cut && open_items.length === d.open_items.length) return d;
    const rollup = definitionOf(d.type)?.rollup;
    return { ...d, facts, open_items, headline: rollup ? rollup.finish(rollup.combine([facts])).headline : d.headline };
  };
};
