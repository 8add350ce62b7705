import { describe, expect, it } from 'vitest';
import { CodeScanner } from '../../packages/server/src/search/code-scanner.ts';
import { random } from '../../packages/server/src/search/seeded-random.ts';

const rand = random(7);

describe('inverted-list code scanner', () => {
  it('dots int8 codes with the query as JS does, to the query\'s 16-bit rounding, for any dimension and growing lists', () => {
    for (const dim of [4, 6, 100, 384]) {
      const scanner = CodeScanner.for(dim) as CodeScanner;
      expect(scanner).not.toBeNull();
      const q = Float32Array.from({ length: dim }, () => rand() - 0.5);
      scanner.use(q);
      // Lists of growing and shrinking sizes: the memory grows under a query already set.
      for (const count of [3, 500, 40, 2_000]) {
        const codes = Int8Array.from({ length: count * dim + dim }, () => Math.round((rand() - 0.5) * 254));
        // The sums are in units of the integer query: times `unit`, they are the dot products.
        const got = scanner.scan(codes, count);
        expect(got.length).toBe(count);
        // Each query component is off by at most half a unit, so a dot by at most that much
        // per unit of code; float32 adds a few parts in 10^7.
        const half = scanner.unit / 2;
        for (let j = 0; j < count; j++) {
          let dot = 0;
          let codeSum = 0;
          for (let d = 0; d < dim; d++) {
            dot += (codes[j * dim + d] as number) * (q[d] as number);
            codeSum += Math.abs(codes[j * dim + d] as number);
          }
          expect(Math.abs((got[j] as number) * scanner.unit - dot)).toBeLessThanOrEqual(half * codeSum + 1e-6 * Math.abs(dot) + 1e-6);
        }
      }
    }
  });

  it('sums without overflow at the largest codes and many dimensions', () => {
    // Every code and query component at its largest: 127 × 32,767 × 1,536 would pass 2^31.
    for (const dim of [100, 1_536, 3_072]) {
      const scanner = CodeScanner.for(dim) as CodeScanner;
      const q = new Float32Array(dim).fill(1 / Math.sqrt(dim));
      scanner.use(q);
      for (const code of [127, -127]) {
        const [sum] = scanner.scan(new Int8Array(dim).fill(code), 1);
        const dot = code * Math.sqrt(dim);
        expect(Math.abs((sum as number) * scanner.unit - dot)).toBeLessThanOrEqual(Math.abs(dot) * 1e-4);
      }
    }
  });

  it('answers zeros for a zero query', () => {
    const scanner = CodeScanner.for(8) as CodeScanner;
    scanner.use(new Float32Array(8));
    expect([...scanner.scan(Int8Array.from({ length: 16 }, (_, i) => i - 8), 2)].map((sum) => sum * scanner.unit)).toEqual([0, 0]);
  });

  it('holds rows for good, and a held row\'s code dot stays within its error bound of the float dot', () => {
    const unit = (v: Float32Array): Float32Array => {
      const norm = Math.sqrt(v.reduce((sum, x) => sum + x * x, 0));
      return v.map((x) => x / norm);
    };
    for (const dim of [6, 100, 384]) {
      const scanner = CodeScanner.for(dim) as CodeScanner;
      // Rows held one by one (the memory grows under them), a few with one dominant component
      // (the largest scale), then one written again in place.
      const rows = Array.from({ length: 3_000 }, (_, i) => unit(Float32Array.from({ length: dim }, (_, d) => (i % 97 === 0 && d === i % dim ? 5 : rand() - 0.5))));
      rows.forEach((v, row) => scanner.hold(row, v, 0));
      rows[17] = unit(Float32Array.from({ length: dim }, () => rand() - 0.5));
      scanner.hold(17, rows[17] as Float32Array, 0);
      // A list scan on another scanner leaves these rows alone.
      (CodeScanner.for(dim) as CodeScanner).scan(new Int8Array(dim * 4).fill(127), 4);
      for (let probe = 0; probe < 5; probe++) {
        const q = unit(Float32Array.from({ length: dim }, () => rand() - 0.5));
        scanner.use(q);
        const sums = scanner.scanHeld(rows.length);
        const bound = scanner.errorBound(q);
        // Tight enough to be worth having: a few hundredths at most for unit vectors.
        expect(bound).toBeLessThan(0.05);
        let worst = 0;
        rows.forEach((v, row) => {
          const exact = v.reduce((sum, x, d) => sum + x * (q[d] as number), 0);
          worst = Math.max(worst, Math.abs((sums[row] as number) * scanner.unit * (scanner.scales[row] as number) - exact));
        });
        expect(worst).toBeLessThanOrEqual(bound);
        expect(worst).toBeGreaterThan(0);
      }
    }
  });
});
