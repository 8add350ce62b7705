/**
 * Just enough of the WebAssembly binary format to write a small module as bytes in
 * TypeScript, with its text form in a comment beside it, so the build needs no WebAssembly
 * toolchain: the vector index's scan (search/dot-kernel.ts) and the built-in embedder's
 * word-by-word ranking (embed/cosine-kernel.ts) are written this way. Each module imports
 * one memory as `m.m` and exports functions of five i32 parameters and no result.
 */

/** A WebAssembly memory, as far as used here. */
export interface WasmMemory {
  readonly buffer: ArrayBuffer;
  grow(pages: number): number;
}

// The WebAssembly global, typed here: the server's TypeScript libraries (es2024 and Node's
// types) leave it undeclared, though every Node version Cairn supports has it.
const wasm = (globalThis as unknown as {
  WebAssembly: {
    Memory: new (descriptor: { initial: number }) => WasmMemory;
    Module: new (bytes: Uint8Array) => object;
    Instance: new (module: object, imports: Record<string, Record<string, unknown>>) => { exports: Record<string, unknown> };
  };
}).WebAssembly;

/** A memory of `pages` pages of 64 KiB (throws where no room is left for one). */
export const wasmMemory = (pages: number): WasmMemory => new wasm.Memory({ initial: pages });

/** An unsigned LEB128 number. */
export const leb = (n: number): number[] => {
  const out: number[] = [];
  do {
    let b = n & 0x7f;
    n >>>= 7;
    if (n) b |= 0x80;
    out.push(b);
  } while (n);
  return out;
};
/** A vector: its length, then its items. */
export const vec = (items: number[][]): number[] => [...leb(items.length), ...items.flat()];
const name = (s: string): number[] => [...leb(s.length), ...Buffer.from(s)];
const section = (id: number, bytes: number[]): number[] => [id, ...leb(bytes.length), ...bytes];

export const I32 = 0x7f;
export const V128 = 0x7b;
/** local.get and local.set of local `i`. */
export const get = (i: number): number[] => [0x20, i];
export const set = (i: number): number[] => [0x21, i];
/** A SIMD instruction (prefix 0xfd, then its opcode). */
export const simd = (op: number): number[] => [0xfd, ...leb(op)];

/** A function taking byte offsets into the memory and counts; the five i32 parameters of every export here. */
export type Kernel = (a: number, b: number, c: number, d: number, e: number) => void;

/**
 * A module of the given functions (each a body: its locals, then its code), all of type
 * (i32 × 5) → (), exported under their names, over an imported memory.
 */
export const moduleBytes = (functions: ReadonlyArray<{ name: string; body: number[] }>): Uint8Array =>
  new Uint8Array([
    0x00, 0x61, 0x73, 0x6d, 1, 0, 0, 0,
    ...section(1, vec([[0x60, ...vec([[I32], [I32], [I32], [I32], [I32]]), 0]])),
    ...section(2, vec([[...name('m'), ...name('m'), 0x02, 0x00, 0x00]])), // imports the memory as m.m
    ...section(3, vec(functions.map(() => [0]))),
    ...section(7, vec(functions.map((f, i) => [...name(f.name), 0x00, i]))),
    ...section(10, vec(functions.map((f) => [...leb(f.body.length), ...f.body]))),
  ]);

const compiled = new Map<Uint8Array, object | null>();

/**
 * The module's exports over `memory`, or null where it cannot be compiled (no WebAssembly, or
 * no SIMD): callers then run the same loop in JS. Each module is compiled once.
 */
export const instantiate = (bytes: Uint8Array, memory: WasmMemory): Record<string, Kernel> | null => {
  if (!compiled.has(bytes)) {
    try {
      compiled.set(bytes, new wasm.Module(bytes));
    } catch {
      compiled.set(bytes, null);
    }
  }
  const module = compiled.get(bytes);
  if (!module) return null;
  return new wasm.Instance(module, { m: { m: memory } }).exports as Record<string, Kernel>;
};
