import type { Entry } from 'cairn-memory-client';

/** One string per entry address, for maps and sets (NUL cannot occur in paths or keys). */
export const addressOf = (e: { entity_path: string; key: string }): string => `${e.entity_path}\u0000${e.key}`;

export const isUnder = (path: string, prefix: string): boolean => prefix === '' || path === prefix || path.startsWith(`${prefix}/`);

/** A one-line preview of a value: its title-like field, else its start. */
export const preview = (entry: Entry): string => {
  const v = entry.value;
  if (typeof v === 'string') return v.slice(0, 120);
  for (const field of ['title', 'summary', 'name', 'text', 'message', 'status', 'state']) {
    const f = v[field];
    if (typeof f === 'string' && f) return f.slice(0, 120);
  }
  return JSON.stringify(v).slice(0, 120);
};
