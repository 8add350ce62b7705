/** The value at quantile `q` (0–1) of ascending `sorted` times in ms, rounded to `places` decimals; NaN when empty. */
export const quantile = (sorted: ArrayLike<number>, q: number, places = 3): number => {
  if (sorted.length === 0) return Number.NaN;
  const scale = 10 ** places;
  return Math.round((sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] as number) * scale) / scale;
};
