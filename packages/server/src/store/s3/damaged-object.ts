import { DamagedDataError } from '../../domain/damaged-data.ts';

/**
 * An object of the bucket that does not hold what the store wrote (cut short, overwritten by
 * hand, written by something else): reads refuse, naming the object, rather than pass over it
 * and answer as if it were not there. Like every backend's damage error, a DamagedDataError
 * (domain/damaged-data.ts); a transport answers it 503 (damagedDataAnswer) and logs it.
 */
export class CorruptDataError extends DamagedDataError {
  readonly key: string;
  constructor(key: string, what: string) {
    super(`${key} is damaged: ${what}`);
    this.key = key;
  }
}

/** `text` parsed as a JSON object, or CorruptDataError naming `key`. */
export const parseObject = <T>(key: string, text: string, what = 'not a JSON object'): T => {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new CorruptDataError(key, `${what} (${error instanceof Error ? error.message : String(error)})`);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new CorruptDataError(key, what);
  return value as T;
};
