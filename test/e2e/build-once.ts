import { buildDashboard, dashboardStale } from '../../scripts/build-dashboard.ts';

/**
 * Vitest global setup: build the dashboard once, before any test file starts, when it is
 * missing or stale — so `npx vitest run test/e2e` works without `npm run build`, and test
 * files running in parallel never build (and empty dist/) under each other's servers.
 */
export function setup(): void {
  if (dashboardStale()) buildDashboard();
}
