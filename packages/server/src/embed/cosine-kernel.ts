/** A WebAssembly memory, as far as used here. */
export interface WasmMemory {
  readonly buffer: ArrayBuffer;
  grow(pages: number): number;
}
// The WebAssembly global, typed here (the server's TypeScript libraries leave it undeclared).
// The embedder is an adapter of its own: it shares no module with the search index's kernels
// (search/dot-kernel.ts), hence these few lines twice.
const wasm = (globalThis as unknown as {
  WebAssembly: {
    Memory: new (descriptor: { initial: number }) => WasmMemory;
    Module: new (bytes: Uint8Array) => object;
    Instance: new (module: object, imports: Record<string, Record<string, unknown>>) => { exports: Record<string, unknown> };
  };
}).WebAssembly;

/** A memory of `pages` pages of 64 KiB. */
export const wasmMemory = (pages: number): WasmMemory => new wasm.Memory({ initial: pages });

const leb = (n: number): number[] => {
  const out: number[] = [];
  do {
    let b = n & 0x7f;
    n >>>= 7;
    if (n) b |= 0x80;
    out.push(b);
  } while (n);
  return out;
};
const vec = (items: number[][]): number[] => [...leb(items.length), ...items.flat()];
const name = (s: string): number[] => [...leb(s.length), ...Buffer.from(s)];
const section = (id: number, bytes: number[]): number[] => [id, ...leb(bytes.length), ...bytes];

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
export type PairDots = (q: number, v: number, pairs: number, dim: number, out: number) => void;

const I32 = 0x7f;
const V128 = 0x7b;
// Locals: the five parameters, then pair p, address qa in q, byte offset k in v, v's bytes, the accumulator.
const [Q, V, PAIRS, DIM, OUT, P, QA, K, END, ACC] = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9] as const;
const get = (i: number): number[] => [0x20, i];
const set = (i: number): number[] => [0x21, i];
const simd = (op: number): number[] => [0xfd, ...leb(op)];

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

const bytes = new Uint8Array([
  0x00, 0x61, 0x73, 0x6d, 1, 0, 0, 0,
  ...section(1, vec([[0x60, ...vec([[I32], [I32], [I32], [I32], [I32]]), 0]])),
  ...section(2, vec([[...name('m'), ...name('m'), 0x02, 0x00, 0x00]])), // imports the memory as m.m
  ...section(3, vec([[0]])),
  ...section(7, vec([[...name('pairDots'), 0x00, 0]])),
  ...section(10, vec([[...leb(body.length), ...body]])),
]);

/** `pairDots` over `memory`, or null where WebAssembly SIMD is not available (the caller sums in JS). */
export const cosineKernel = (memory: WasmMemory): PairDots | null => {
  let module: object;
  try {
    module = new wasm.Module(bytes);
  } catch {
    return null;
  }
  return new wasm.Instance(module, { m: { m: memory } }).exports.pairDots as PairDots;
};
