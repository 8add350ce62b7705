import { vi } from 'vitest';
import { BucketObjects } from '../../packages/server/src/store/s3/bucket-objects.ts';

/**
 * The object keys `run` GETs through BucketObjects whose key `counted` picks, in order: a
 * pass-through spy (every read still goes to the bucket), removed when `run` ends.
 */
export const keysGot = async (counted: (key: string) => boolean, run: () => Promise<unknown>): Promise<string[]> => {
  const got: string[] = [];
  const original = BucketObjects.prototype.getObject;
  const spy = vi.spyOn(BucketObjects.prototype, 'getObject').mockImplementation(function (this: BucketObjects, key, options) {
    if (counted(key)) got.push(key);
    return original.call(this, key, options);
  });
  try {
    await run();
  } finally {
    spy.mockRestore();
  }
  return got;
};
