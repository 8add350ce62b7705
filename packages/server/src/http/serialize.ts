/**
 * Response serialisation. Stored versions are immutable objects, and the same current entry
 * is often read many times in a row, so its JSON is kept per object (weakly: it goes when
 * the store drops the version). Everything else is stringified as usual.
 */
const cache = new WeakMap<object, string>();

export const serializeJson = (data: unknown): string => {
  if (data === null || typeof data !== 'object') return JSON.stringify(data);
  const hit = cache.get(data);
  if (hit !== undefined) return hit;
  const json = JSON.stringify(data);
  if (isStoredVersion(data)) cache.set(data, json);
  return json;
};

/** Only whole entries are cached: wrappers ({entries: …}) are built per request. */
const isStoredVersion = (data: object): boolean => 'content_hash' in data && 'version' in data && Object.isFrozen(data);
