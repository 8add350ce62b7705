/** A data directory whose files do not hold what the store wrote: start-up stops rather than serve wrong data. */
export class CorruptDataError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'CorruptDataError';
  }
}
