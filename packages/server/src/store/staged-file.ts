import { mkdtemp, open, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** A file in a temporary directory of its own, with its size once written. */
export interface StagedFile {
  path: string;
  size: number;
}

/**
 * Stream what `fill` writes to a private temporary file, hand it to `use`, then delete it.
 * For a saved search index sent to shared storage (an S3 object, PostgreSQL rows): the
 * index is encoded in slices between requests, seconds at a million entries, and staging it
 * keeps that time out of the upload (no request or transaction held open meanwhile) without
 * holding the whole file in memory a second time.
 */
export const withStagedFile = async <T>(fill: (sink: (chunk: Buffer) => Promise<void>) => Promise<void>, use: (file: StagedFile) => Promise<T>): Promise<T> => {
  const dir = await mkdtemp(join(tmpdir(), 'cairn-search-'));
  try {
    const path = join(dir, 'index');
    const file = await open(path, 'w', 0o600);
    let size = 0;
    try {
      await fill(async (chunk) => {
        await file.write(chunk);
        size += chunk.length;
      });
    } finally {
      await file.close();
    }
    return await use({ path, size });
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
};
