import { afterAll, expect } from 'vitest';

/**
 * Test files run one after another in the same process (vitest.config.ts, `isolate: false`),
 * so a setting one file leaves in the environment reaches the files after it: a test knob
 * (CAIRN_TEST_…) or a backend setting would quietly change what they test. Each file must put
 * back what it set; one that does not fails here, naming the variables, which are put back
 * before the next file starts.
 */
const watched = (name: string): boolean => name.startsWith('CAIRN_') || name === 'NODE_OPTIONS';
const found = new Map(Object.entries(process.env).filter(([name]) => watched(name)));

afterAll(() => {
  const names = new Set([...found.keys(), ...Object.keys(process.env).filter(watched)]);
  const left = [...names].filter((name) => process.env[name] !== found.get(name));
  for (const name of left) {
    const value = found.get(name);
    if (value === undefined) delete process.env[name];
    else process.env[name] = value;
  }
  expect(left, 'environment variables this file changed and did not put back (restore them in afterAll)').toEqual([]);
});
