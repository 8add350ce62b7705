import { I32, type Kernel, V128, type WasmMemory, get, instantiate, moduleBytes, set, simd, vec } from '../wasm/module-bytes.ts';

/**
 * The word-by-word ranking's one loop, in WebAssembly: one candidate word's dot products with
 * the query words, two query words at a time in the two lanes of a 128-bit vector of doubles.
 * Each lane adds its products in the same order and at the same precision as the JS loop
 * (float32 components widened to doubles, multiplied and summed one after the other, the sum
 * rounded to float32 once), so every similarity is the same to the bit; the lanes and the
 * absence of bounds checks make it faster.
 *
 *   (func (export "pairDots") (param $q i32) (param $v i32) (param $pairs i32) (param $dim i32) (param $out i32)
 *     for p in [0, pairs): f32 out[2p], out[2p+1] = Σ_d f64 q[p][d] · f64(v[d])
 *   where q[p][d] is the 16 bytes (query word 2p's component d, query word 2p+1's), as doubles
 */
export type PairDots = Kernel;

// Locals: the five parameters, then pair p, address qa in q, byte offset k in v, v's bytes, the accumulator.
const [Q, V, PAIRS, DIM, OUT, P, QA, K, END, ACC] = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9] as const;

const body: number[] = [
  ...vec([[4, I32], [1, V128]]),
  ...get(DIM), 0x41, 2, 0x74, ...set(END), // v's bytes: 4·dim
  ...get(Q), ...set(QA),
  0x02, 0x40, 0x03, 0x40,                                   // block; loop (pairs)
    ...get(P), ...get(PAIRS), 0x4f, 0x0d, 1,                //   br_if out when p >= pairs
    0x44, 0, 0, 0, 0, 0, 0, 0, 0, ...simd(0x14), ...set(ACC), // f64.const 0; f64x2.splat
    0x41, 0, ...set(K),
    0x02, 0x40, 0x03, 0x40,                                 //   block; loop (components)
      ...get(K), ...get(END), 0x4f, 0x0d, 1,                //     br_if out when k >= end
      ...get(ACC),
      ...get(QA), ...simd(0x00), 4, 0,                      //     v128.load q pair
      ...get(V), ...get(K), 0x6a, 0x2a, 2, 0, 0xbb, ...simd(0x14), // f32.load v[k]; f64.promote_f32; f64x2.splat
      ...simd(0xf2), ...simd(0xf0), ...set(ACC),            //     f64x2.mul; f64x2.add
      ...get(QA), 0x41, 16, 0x6a, ...set(QA),
      ...get(K), 0x41, 4, 0x6a, ...set(K),
      0x0c, 0,                                              //     br loop
    0x0b, 0x0b,
    ...get(OUT), ...get(P), 0x41, 3, 0x74, 0x6a, ...get(ACC), ...simd(0x21), 0, 0xb6, 0x38, 2, 0, // out[2p] = f32(lane 0)
    ...get(OUT), ...get(P), 0x41, 3, 0x74, 0x6a, ...get(ACC), ...simd(0x21), 1, 0xb6, 0x38, 2, 4, // out[2p+1] = f32(lane 1)
    ...get(P), 0x41, 1, 0x6a, ...set(P),
    0x0c, 0,                                                //   br loop
  0x0b, 0x0b,
  0x0b,
];

const bytes = moduleBytes([{ name: 'pairDots', body }]);

/** `pairDots` over `memory`, or null where WebAssembly SIMD is not available (the caller sums in JS). */
export const cosineKernel = (memory: WasmMemory): PairDots | null => instantiate(bytes, memory)?.pairDots ?? null;
