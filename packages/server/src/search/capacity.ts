/**
 * The next capacity of a growing array: a quarter more, not double. Copying stays linear
 * overall (about five copies per element instead of two), and a loaded index leaves at most
 * a fifth of its postings and vectors unused where doubling left up to half.
 */
export const grownCapacity = (current: number, needed: number): number => Math.max(needed, Math.ceil(current * 1.25), 2);
