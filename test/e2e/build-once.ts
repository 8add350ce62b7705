import { dashboardStale, buildDashboard } from '../../scripts/build-dashboard.ts';
import { buildPackages } from '../../scripts/build.ts';

/**
 * Vitest global setup: build what the suites run as built, once, before any test file starts,
 * when it is missing or older than its sources — the packages' dist/ (every `cairn` a suite
 * spawns runs packages/server/bin/cairn.js: test/helpers/cli-args.ts) and the dashboard — so
 * `npx vitest run …` after an edit runs the edited code without `npm run build`, and test
 * files running in parallel never build (and empty dist/) under each other's servers.
 */
export async function setup(): Promise<void> {
  await buildPackages(false);
  if (dashboardStale()) buildDashboard();
}
