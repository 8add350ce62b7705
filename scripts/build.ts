// Builds what the packages ship: the client (packages/client/dist, compiled by tsc with its
// declarations), then the server (packages/server/dist, bundled: scripts/build-server.ts; and
// integrations/ copied into packages/server/integrations), then the dashboard.
// Each step is skipped when its output is newer than every source; `--force` builds all.
// `--dashboard` builds the dashboard only (what `npm start` needs: it runs the sources).
// The suites' global setup runs the same incremental build (test/e2e/build-once.ts): the
// `cairn` processes they spawn run the package's dist/, as users do.
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { buildDashboard, dashboardStale } from './build-dashboard.ts';
import { buildServer } from './build-server.ts';

const root = join(import.meta.dirname, '..');
const tsc = join(root, 'node_modules', 'typescript', 'bin', 'tsc');
const STAMP = '.build-stamp';

const newest = (dir: string): number => {
  let at = 0;
  for (const file of readdirSync(dir, { recursive: true, encoding: 'utf8' })) at = Math.max(at, statSync(join(dir, file)).mtimeMs);
  return at;
};

/** Whether `pkg`/dist is missing or older than its sources or the file that says how to build them. */
const stale = (pkg: string, config: string): boolean => {
  const stamp = join(pkg, 'dist', STAMP);
  if (!existsSync(stamp)) return true;
  return statSync(stamp).mtimeMs < Math.max(newest(join(pkg, 'src')), statSync(config).mtimeMs);
};

const compileClient = (pkg: string): void => {
  const dist = join(pkg, 'dist');
  // From empty, so a module deleted from src/ cannot live on in what is packed.
  rmSync(dist, { recursive: true, force: true });
  const result = spawnSync(process.execPath, [tsc, '-p', join(pkg, 'tsconfig.json')], { stdio: 'inherit' });
  if (result.status !== 0) throw new Error(`build of ${pkg} failed (tsc exit ${result.status})`);
  writeFileSync(join(dist, STAMP), `${new Date().toISOString()}\n`);
  console.log(`built ${pkg.slice(root.length + 1)}/dist`);
};

/**
 * The coding-agent settings and their hook script (integrations/), shipped in cairn-memory so
 * that an npm user copies them from node_modules/cairn-memory/integrations. Copied afresh on
 * every build (a few kB): the checkout's integrations/ is the one source.
 */
const copyIntegrations = (server: string): void => {
  const target = join(server, 'integrations');
  rmSync(target, { recursive: true, force: true });
  cpSync(join(root, 'integrations'), target, { recursive: true });
};

export const buildPackages = async (force: boolean): Promise<void> => {
  const client = join(root, 'packages', 'client');
  const server = join(root, 'packages', 'server');
  if (force || stale(client, join(client, 'tsconfig.json'))) compileClient(client);
  // The server imports the client's build at run time (a dependency, not bundled): a server
  // build is stale only when its own sources changed. (Type checking is `npm run typecheck`'s.)
  if (force || stale(server, join(root, 'scripts', 'build-server.ts'))) {
    await buildServer(server, STAMP);
    console.log('built packages/server/dist');
  }
  copyIntegrations(server);
};

if (import.meta.main) {
  const force = process.argv.includes('--force');
  if (!process.argv.includes('--dashboard')) await buildPackages(force);
  if (force || dashboardStale()) buildDashboard();
}
