import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CLIENT_VERSION } from '../../packages/client/src/version.ts';
import { ClientEnv } from '../../packages/server/src/cli/client-env.ts';

// One version for everything a user installs, and a registry description (server.json) that
// says what the package really is and reads.

const root = join(import.meta.dirname, '../..');
const json = async (path: string) => JSON.parse(await readFile(join(root, path), 'utf8')) as Record<string, any>;
const repo = await json('package.json');
const server = await json('packages/server/package.json');
const client = await json('packages/client/package.json');
const registry = await json('packages/server/server.json');

describe('versions and the MCP registry description', () => {
  it('both packages, the repository, the client constant and server.json carry one version', async () => {
    const { version } = server;
    expect(version).toMatch(/^\d+\.\d+\.\d+(-[\w.]+)?$/);
    expect([repo.version, client.version, CLIENT_VERSION, registry.version, registry.packages[0].version]).toEqual(Array(5).fill(version));
    // The server needs exactly its own release of the client.
    expect(server.dependencies['cairn-memory-client']).toBe(version);
    // The changelog's newest section is this version (or the unreleased one above it).
    const changelog = await readFile(join(root, 'CHANGELOG.md'), 'utf8');
    expect(/^## \[?([^\]\s]+)/m.exec(changelog)?.[1]).toMatch(new RegExp(`^(Unreleased|${version.replaceAll('.', '\\.')})$`));
  });

  it('server.json names the npm package, its stdio command and every variable `cairn mcp` reads', () => {
    expect(registry.name).toBe(server.mcpName);
    expect(registry.name).toMatch(/^[a-zA-Z0-9.-]+\/[a-zA-Z0-9._-]+$/);
    expect(registry.description.length).toBeLessThanOrEqual(100);
    const [pkg] = registry.packages;
    expect(pkg).toMatchObject({ registryType: 'npm', identifier: server.name, transport: { type: 'stdio' }, runtimeHint: 'npx' });
    expect(pkg.packageArguments).toEqual([{ type: 'positional', value: 'mcp' }]);
    // Forwarding, it reads the client's variables; with no server address, it keeps memory in a data directory.
    expect(pkg.environmentVariables.map((v: { name: string }) => v.name).sort()).toEqual([...Object.keys(ClientEnv.shape), 'CAIRN_DATA_DIR'].sort());
    const required = pkg.environmentVariables.filter((v: { isRequired: boolean }) => v.isRequired).map((v: { name: string }) => v.name);
    expect(required).toEqual([]);
    expect(pkg.environmentVariables.find((v: { name: string }) => v.name === 'CAIRN_API_KEY').isSecret).toBe(true);
  });

  it('the server package runs on every maintained Node line and has one command, cairn', () => {
    expect(server.engines.node).toBe('>=22.12.0');
    expect(client.engines.node).toBe('>=22.12.0');
    expect(server.bin).toEqual({ cairn: './bin/cairn.js' });
    expect(client.dependencies ?? {}).toEqual({});
    // The pinned Node binary is a development tool of this repository, never a user's dependency.
    expect(server.dependencies.node).toBeUndefined();
    expect(repo.devDependencies.node).toMatch(/^24\./);
  });
});
