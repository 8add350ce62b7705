import { I32, type Kernel, V128, type WasmMemory, get, instantiate, moduleBytes, set, simd, vec } from '../wasm/module-bytes.ts';

/**
 * The word-by-word ranking's loops, in WebAssembly SIMD.
 *
 * `quadDots`: one candidate word's dot products with the query words, four query words at a
 * time in the four float32 lanes of a 128-bit vector. Each lane multiplies and adds in float32,
 * one component after the other, as the JS loop does with Math.fround at each step (a float32
 * operation computed in doubles and rounded once is the float32 result: doubles carry more than
 * twice float32's precision), so every similarity is the same to the bit either way. Float32
 * sums of 100 products of unit vectors' components are within about 1e-6 of the exact cosine;
 * the earlier kernel summed in doubles, two words a lane pair: half the words a step.
 *
 *   (func (export "quadDots") (param $q i32) (param $v i32) (param $quads i32) (param $dim i32) (param $out i32)
 *     for p in [0, quads): f32 out[4p + j] = Σ_d q[p][d][j] · v[d]   (j = 0..3, float32 throughout)
 *   where q[p][d] is the 16 bytes (query words 4p…4p+3's component d)
 *
 * `maxRows`: best[j] = max(best[j], row[j]) over the rows listed, j in [0, stride): a text's
 * best match for each query word, over its distinct words' rows of similarities.
 *
 *   (func (export "maxRows") (param $slots i32) (param $count i32) (param $stride i32) (param $rows i32) (param $best i32)
 *     for s in slots[0, count): for j in [0, stride) by 4: best[j..j+4] = f32x4.max(best[j..j+4], rows[s·stride + j..])
 */
export type QuadDots = Kernel;

// Locals: the five parameters, then quad p, address qa in q, byte offset k in v, v's bytes, the accumulator.
const [Q, V, QUADS, DIM, OUT, P, QA, K, END, ACC] = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9] as const;

const quadDots: number[] = [
  ...vec([[4, I32], [1, V128]]),
  ...get(DIM), 0x41, 2, 0x74, ...set(END), // v's bytes: 4·dim
  ...get(Q), ...set(QA),
  0x02, 0x40, 0x03, 0x40,                                   // block; loop (quads)
    ...get(P), ...get(QUADS), 0x4f, 0x0d, 1,                //   br_if out when p >= quads
    0x43, 0, 0, 0, 0, ...simd(0x13), ...set(ACC),           //   f32.const 0; f32x4.splat
    0x41, 0, ...set(K),
    0x02, 0x40, 0x03, 0x40,                                 //   block; loop (components)
      ...get(K), ...get(END), 0x4f, 0x0d, 1,                //     br_if out when k >= end
      ...get(ACC),
      ...get(QA), ...simd(0x00), 4, 0,                      //     v128.load q quad
      ...get(V), ...get(K), 0x6a, 0x2a, 2, 0, ...simd(0x13), //    f32.load v[k]; f32x4.splat
      ...simd(0xe6), ...simd(0xe4), ...set(ACC),            //     f32x4.mul; f32x4.add
      ...get(QA), 0x41, 16, 0x6a, ...set(QA),
      ...get(K), 0x41, 4, 0x6a, ...set(K),
      0x0c, 0,                                              //     br loop
    0x0b, 0x0b,
    ...get(OUT), ...get(P), 0x41, 4, 0x74, 0x6a, ...get(ACC), ...simd(0x0b), 4, 0, // v128.store out[4p..4p+4]
    ...get(P), 0x41, 1, 0x6a, ...set(P),
    0x0c, 0,                                                //   br loop
  0x0b, 0x0b,
  0x0b,
];

// Locals of maxRows: the five parameters, then the slot index s, the row's address, offset j, the row's bytes.
const [SLOTS, COUNT, STRIDE, ROWS, BEST, S, ROW, J, BYTES] = [0, 1, 2, 3, 4, 5, 6, 7, 8] as const;

const maxRows: number[] = [
  ...vec([[4, I32]]),
  ...get(STRIDE), 0x41, 2, 0x74, ...set(BYTES),             // a row's bytes: 4·stride
  0x02, 0x40, 0x03, 0x40,                                   // block; loop (slots)
    ...get(S), ...get(COUNT), 0x4f, 0x0d, 1,                //   br_if out when s >= count
    ...get(ROWS), ...get(SLOTS), ...get(S), 0x41, 2, 0x74, 0x6a, 0x28, 2, 0, ...get(BYTES), 0x6c, 0x6a, ...set(ROW), // rows + slots[s]·bytes
    0x41, 0, ...set(J),
    0x02, 0x40, 0x03, 0x40,                                 //   block; loop (four lanes at a time)
      ...get(J), ...get(BYTES), 0x4f, 0x0d, 1,              //     br_if out when j >= bytes
      ...get(BEST), ...get(J), 0x6a,
      ...get(BEST), ...get(J), 0x6a, ...simd(0x00), 4, 0,
      ...get(ROW), ...get(J), 0x6a, ...simd(0x00), 4, 0,
      ...simd(0xe9), ...simd(0x0b), 4, 0,                   //     f32x4.max; v128.store best[j..]
      ...get(J), 0x41, 16, 0x6a, ...set(J),
      0x0c, 0,
    0x0b, 0x0b,
    ...get(S), 0x41, 1, 0x6a, ...set(S),
    0x0c, 0,
  0x0b, 0x0b,
  0x0b,
];

const bytes = moduleBytes([
  { name: 'quadDots', body: quadDots },
  { name: 'maxRows', body: maxRows },
]);

/** `quadDots` and `maxRows` over `memory`, or null where WebAssembly SIMD is not available (the caller works in JS). */
export const cosineKernels = (memory: WasmMemory): { quadDots: QuadDots; maxRows: Kernel } | null => {
  const exports = instantiate(bytes, memory);
  return exports?.quadDots && exports.maxRows ? { quadDots: exports.quadDots, maxRows: exports.maxRows } : null;
};
