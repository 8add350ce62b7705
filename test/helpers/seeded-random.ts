/**
 * A small seeded generator of numbers in [0, 1) (a linear congruential one): a randomised test
 * that fails names its seed, and the same seed replays the same sequence.
 */
export const seededRandom = (seed: number): (() => number) => () => {
  seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648;
  return seed / 2_147_483_648;
};
