import { purgeQuoting } from '../../cortex/forget-purge.ts';
import type { ForgetTarget } from '../../domain/forget-target.ts';
import type { RecordStore } from '../../ports/records.ts';

/**
 * Delete what the Cortex compiled from the entries `target` names: every digest, pattern,
 * trace and compile event of the namespace that cites one of them (cortex/forget-purge.ts:
 * paths match segment-wise, and with a key only records citing that entry or its whole path
 * go). Records derived only from other entries stay. The Cortex, told of the forget, rebuilds
 * what still derives; deleting here as well covers a Cortex that is not running. Answers how
 * many records went.
 */
export const purgeDerived = (records: RecordStore, target: ForgetTarget): Promise<number> => purgeQuoting(records, target);
