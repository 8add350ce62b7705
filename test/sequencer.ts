import { relative } from 'node:path';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

/**
 * Files that run a long suite from a few lines: a contract, crash loop or import crash test
 * run on one backend. vitest runs the files it has timings for longest first, and files it has
 * none for (every file of a fresh clone, as in CI) largest first, so these came last, and the
 * longest ran alone at the end: in a fresh-clone run of 1,461 s, http-s3 (84 s) started at
 * 1,371 s. Longest first, as measured in fresh-clone runs.
 */
const LONG_FROM_SHORT_FILES = [
  'test/contract/http-s3.test.ts',
  'test/integration/archive-import-crash-s3.test.ts',
  'test/contract/store-s3.test.ts',
  'test/integration/maintenance-crash-postgres.test.ts',
  'test/integration/maintenance-crash-fs.test.ts',
  'test/contract/http-postgres.test.ts',
  'test/integration/archive-import-crash-fs.test.ts',
  'test/integration/archive-import-crash-postgres.test.ts',
  'test/contract/client-s3.test.ts',
  'test/integration/batch-crash-s3.test.ts',
  'test/contract/client-postgres.test.ts',
  'test/contract/http-fs.test.ts',
];

/** vitest's order, except that on a run without timings the files above go first. */
export class LongFirstSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    if (files.some((spec) => this.ctx.cache.getTestSpecificationResult(spec) !== undefined)) return sorted;
    const rank = (spec: TestSpecification): number => {
      const at = LONG_FROM_SHORT_FILES.indexOf(relative(spec.project.config.root, spec.moduleId));
      return at < 0 ? LONG_FROM_SHORT_FILES.length : at;
    };
    // A stable sort: the rest keep vitest's order.
    return sorted.sort((a, b) => rank(a) - rank(b));
  }
}
