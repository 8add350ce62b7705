import { makePostgresTemplate } from './helpers/postgres.ts';

/**
 * Vitest global setup: one PostgreSQL cluster made before any suite starts, which each suite's
 * cluster is copied from (helpers/postgres.ts). Without it every suite still makes its own.
 */
export async function setup(): Promise<() => Promise<void>> {
  try {
    return await makePostgresTemplate();
  } catch (error) {
    console.warn(`no PostgreSQL template cluster (each suite will make its own): ${String(error)}`);
    return async () => {};
  }
}
