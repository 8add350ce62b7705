// Builds what the packages ship: the client (packages/client/dist), then the server, which
// compiles against the client's declarations (packages/server/dist, with the SQL migrations
// and the word table copied beside the code that reads them, and integrations/ copied into
// packages/server/integrations), then the dashboard.
// Each step is skipped when its output is newer than every source; `--force` builds all.
// `--dashboard` builds the dashboard only (what `npm start` needs: it runs the sources).
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { buildDashboard, dashboardStale } from './build-dashboard.ts';

const root = join(import.meta.dirname, '..');
const tsc = join(root, 'node_modules', 'typescript', 'bin', 'tsc');
/** Files the server reads at run time beside its modules (import.meta.url-relative). */
const ASSETS = /\.(sql|bin|tsv)$|-LICENSE$/;
const STAMP = '.build-stamp';

const newest = (dir: string): number => {
  let at = 0;
  for (const file of readdirSync(dir, { recursive: true, encoding: 'utf8' })) at = Math.max(at, statSync(join(dir, file)).mtimeMs);
  return at;
};

const stale = (pkg: string, after = 0): boolean => {
  const stamp = join(pkg, 'dist', STAMP);
  if (!existsSync(stamp)) return true;
  const built = statSync(stamp).mtimeMs;
  return built < Math.max(newest(join(pkg, 'src')), statSync(join(pkg, 'tsconfig.json')).mtimeMs, after);
};

const compile = (pkg: string): void => {
  const dist = join(pkg, 'dist');
  // From empty, so a module deleted from src/ cannot live on in what is packed.
  rmSync(dist, { recursive: true, force: true });
  const result = spawnSync(process.execPath, [tsc, '-p', join(pkg, 'tsconfig.json')], { stdio: 'inherit' });
  if (result.status !== 0) throw new Error(`build of ${pkg} failed (tsc exit ${result.status})`);
  cpSync(join(pkg, 'src'), dist, { recursive: true, filter: (from) => statSync(from).isDirectory() || ASSETS.test(from) });
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

export const buildPackages = (force: boolean): void => {
  const client = join(root, 'packages', 'client');
  const server = join(root, 'packages', 'server');
  const clientStale = force || stale(client);
  if (clientStale) compile(client);
  // The server's declarations embed the client's types: a new client means a new server.
  if (clientStale || stale(server, statSync(join(client, 'dist', STAMP)).mtimeMs)) compile(server);
  copyIntegrations(server);
};

if (import.meta.main) {
  const force = process.argv.includes('--force');
  if (!process.argv.includes('--dashboard')) buildPackages(force);
  if (force || dashboardStale()) buildDashboard();
}
