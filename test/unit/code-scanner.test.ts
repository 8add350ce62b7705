import { describe, expect, it } from 'vitest';
import { CodeScanner } from '../../packages/server/src/search/code-scanner.ts';
import { random } from '../../packages/server/src/search/seeded-random.ts';

const rand = random(7);

describe('inverted-list code scanner', () => {
  it('dots int8 codes with the query as JS does, for any multiple of 4 dimensions and growing lists', () => {
    for (const dim of [4, 100, 384]) {
      const scanner = CodeScanner.for(dim) as CodeScanner;
      expect(scanner).not.toBeNull();
      const q = Float32Array.from({ length: dim }, () => rand() - 0.5);
      scanner.use(q);
      // Lists of growing and shrinking sizes: the memory grows under a query already set.
      for (const count of [3, 500, 40, 2_000]) {
        const codes = Int8Array.from({ length: count * dim + dim }, () => Math.round((rand() - 0.5) * 254));
        const got = scanner.scan(codes, count);
        expect(got.length).toBe(count);
        for (let j = 0; j < count; j++) {
          let dot = 0;
          for (let d = 0; d < dim; d++) dot += (codes[j * dim + d] as number) * (q[d] as number);
          expect(got[j]).toBeCloseTo(dot, 2);
        }
      }
    }
    expect(CodeScanner.for(6)).toBeNull();
  });
});
