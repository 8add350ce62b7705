/**
 * A short randomised wait before retrying a write that lost a race, so that writers piling
 * onto one key spread out instead of colliding again in lock-step (up to ~100 ms).
 */
export const contentionBackoff = (attempt: number): Promise<void> => {
  const ceiling = Math.min(100, 2 ** attempt);
  return new Promise((resolve) => setTimeout(resolve, Math.random() * ceiling));
};
