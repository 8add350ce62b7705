import type { EntryAddress } from './entry.ts';
import { pathHasPrefix } from './names.ts';

/** What `Store.forget` removes: every entry of `namespace` under `prefix`, or the one entry `key` at `prefix`. */
export interface ForgetTarget {
  namespace: string;
  /** Segment-wise entity path prefix (see `pathHasPrefix`); with `key`, the exact entity path. */
  prefix: string;
  key?: string;
}

/** Whether `target` names the entry at `address`. */
export const forgetNames = (target: ForgetTarget, address: EntryAddress): boolean =>
  address.namespace === target.namespace &&
  (target.key === undefined ? pathHasPrefix(address.entity_path, target.prefix) : address.entity_path === target.prefix && address.key === target.key);
