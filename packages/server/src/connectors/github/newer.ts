import type { EntryValue } from '../../domain/entry.ts';
import type { MappedWrite } from '../connector.ts';
import { fieldsOf, notAfterReceipt } from '../lifecycle.ts';

/** An ISO time's milliseconds, or null when absent or not a time. */
const instant = (iso: unknown): number | null => {
  const ms = typeof iso === 'string' ? Date.parse(iso) : Number.NaN;
  return Number.isNaN(ms) ? null : ms;
};

/**
 * `write` unless the entry already holds a later state of the object. GitHub redelivers failed
 * deliveries later, in no guaranteed order, and its signature does not cover X-GitHub-Delivery,
 * so a late or replayed delivery (an `opened` after the merge) would otherwise roll the entry
 * back. Every payload carries the object's own time, which GitHub moves on each change; the
 * value keeps it as `field`. A delivery older than the entry answers the current value, and
 * deliverWrites makes no version of it. An equal time still writes, so a second change within
 * the same second lands (the same content again makes no version). A payload without a time
 * writes as it always did. A time past the receipt time `now` plus the skew allowance is kept
 * (and compared) as that bound, so a far-future one cannot hold the entry (notAfterReceipt).
 */
export const unlessOlder = (write: MappedWrite, field: string, now: number): MappedWrite => {
  const { value: given, ...rest } = write;
  const fields = fieldsOf(given ?? null);
  const stated = fields?.[field];
  const value = fields && typeof stated === 'string' ? { ...fields, [field]: notAfterReceipt(stated, now) } : given;
  const at = instant(fieldsOf(value ?? null)?.[field]);
  if (value === undefined || at === null) return write;
  return {
    ...rest,
    update: (current: EntryValue | null) => {
      const held = instant(fieldsOf(current)?.[field]);
      return current !== null && held !== null && at < held ? current : value;
    },
  };
};
