/**
 * Stored data that does not hold what the store wrote (a flipped bit in a log, an object cut
 * short, a row edited by hand): not an outage, since a retry meets it again, and not the
 * caller's mistake. Each backend names what is damaged in its own subclass; whatever answers a
 * request or runs an export can tell damage from other failures by this one class.
 */
export class DamagedDataError extends Error {
  constructor(message: string) {
    super(message);
    this.name = new.target.name;
  }
}
