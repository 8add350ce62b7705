// Builds the dashboard (packages/server/dashboard → its dist/) when it is missing or older than its
// sources, so `npm start` and `npm test` work on a fresh clone without a separate step.
// `--force` always builds. Without Vite (a production install without dev dependencies)
// and without a build, it says so and the server serves a page explaining what to run.
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

const root = join(import.meta.dirname, '..');
const dashboard = join(root, 'packages', 'server', 'dashboard');
const built = join(dashboard, 'dist', 'index.html');

// The client's sources are built into the dashboard too (its SSE parser; vite.config.ts).
const client = join(root, 'packages', 'client', 'src');

const newestIn = (dir: string): number => {
  let newest = 0;
  for (const file of readdirSync(dir, { recursive: true, encoding: 'utf8' })) {
    if (file.startsWith('dist')) continue;
    newest = Math.max(newest, statSync(join(dir, file)).mtimeMs);
  }
  return newest;
};

const newestSource = (): number => Math.max(newestIn(dashboard), newestIn(client));

/** Whether dist/ is missing or older than any file it is built from. */
export const dashboardStale = (): boolean => !existsSync(built) || statSync(built).mtimeMs < newestSource();

export const buildDashboard = (): void => {
  const vite = join(root, 'node_modules', 'vite', 'bin', 'vite.js');
  if (!existsSync(vite)) {
    console.warn('dashboard: not built, and Vite is not installed (npm install with dev dependencies, then npm run build)');
    return;
  }
  // NODE_ENV=production whoever calls (vitest sets it to "test", which would make Vite emit
  // Preact's development JSX runtime, a third larger).
  const env = { ...process.env, NODE_ENV: 'production' };
  const result = spawnSync(process.execPath, [vite, 'build', '--config', join(dashboard, 'vite.config.ts')], { stdio: 'inherit', cwd: root, env });
  if (result.status !== 0) throw new Error(`dashboard build failed (exit ${result.status})`);
  console.log('dashboard: built into packages/server/dashboard/dist');
};

if (import.meta.main) {
  if (process.argv.includes('--force') || dashboardStale()) buildDashboard();
}
