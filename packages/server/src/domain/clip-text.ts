/**
 * Text cut to a length counted in UTF-16 code units, as JavaScript counts it, but never inside
 * a surrogate pair: half of one (a lone surrogate) has no UTF-8 form, so PostgreSQL refuses the
 * whole document holding it and a strict JSON reader the whole answer. One emoji at a cut point
 * stopped the Cortex on PostgreSQL for good.
 */
export const clipText = (text: string, max: number): string => {
  if (text.length <= max) return text;
  const head = text.slice(0, Math.max(0, max));
  return /[\ud800-\udbff]$/.test(head) ? head.slice(0, -1) : head;
};

/** `text` cut to at most `max` code units, an ellipsis marking a cut (and counted in `max`). */
export const clipWithEllipsis = (text: string, max: number): string => (text.length > max ? `${clipText(text, max - 1)}…` : text);
