import type { EntryAddress } from '../domain/entry.ts';
import { pathHasPrefix } from '../domain/names.ts';
import type { ForgetTarget } from '../ports/store.ts';

/** Whether `target` names the entry at `address`. */
export const forgetNames = (target: ForgetTarget, address: EntryAddress): boolean =>
  address.namespace === target.namespace &&
  (target.key === undefined ? pathHasPrefix(address.entity_path, target.prefix) : address.entity_path === target.prefix && address.key === target.key);
