/**
 * A duration in milliseconds that a test may shorten through the environment variable `name`
 * (CAIRN_TEST_…): a positive number there wins, anything else leaves `fallback`. Only for the
 * waits tests would otherwise sit out (lock staleness, batch deadlines, query deadlines);
 * read at each call, so a test process can set it before the first use.
 */
export const testableMs = (name: string, fallback: number): number => {
  const forTests = Number(process.env[name]);
  return forTests > 0 ? forTests : fallback;
};
