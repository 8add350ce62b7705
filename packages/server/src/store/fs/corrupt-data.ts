import { DamagedDataError } from '../../domain/damaged-data.ts';

/** A data directory whose files do not hold what the store wrote: start-up stops rather than serve wrong data. */
export class CorruptDataError extends DamagedDataError {}
