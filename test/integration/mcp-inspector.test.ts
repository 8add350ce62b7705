import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Cairn, startCairn } from '../helpers/cairn.ts';

const run = promisify(execFile);
const KEY = 'inspector-key-0123456789';

// The MCP Inspector's CLI (npm @modelcontextprotocol/inspector-cli), a client nobody here
// wrote. It checks for `../package.json` relative to the working directory but imports it
// relative to its own module, so it runs from its build/ directory, where both agree.
const INSPECTOR_DIR = join(dirname(createRequire(import.meta.url).resolve('@modelcontextprotocol/inspector-cli/package.json')), 'build');

let cairn: Cairn;
let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'cairn-inspector-'));
  cairn = await startCairn({ CAIRN_DATA_DIR: dir, CAIRN_API_KEYS: KEY });
});
afterAll(async () => {
  await cairn?.close();
  await rm(dir, { recursive: true, force: true });
});

const inspector = async (key: string, ...args: string[]) => {
  const argv = ['cli.js', '--cli', `${cairn.url}/mcp`, '--transport', 'http', '--header', `X-Cairn-API-Key: ${key}`, ...args];
  return run(process.execPath, argv, { cwd: INSPECTOR_DIR, env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp' }, timeout: 20_000 });
};

describe('the MCP Inspector CLI against /mcp', () => {
  it('lists the tools', async () => {
    const { stdout } = await inspector(KEY, '--method', 'tools/list');
    const names = (JSON.parse(stdout) as { tools: Array<{ name: string }> }).tools.map((t) => t.name);
    expect(names).toEqual(expect.arrayContaining(['memory_write', 'memory_read', 'memory_list', 'memory_history', 'memory_delete', 'memory_record_outcome']));
  });

  it('calls memory_write and memory_read', async () => {
    const path = `repos/acme/inspector-${Date.now()}`;
    const written = await inspector(KEY, '--method', 'tools/call', '--tool-name', 'memory_write', '--tool-arg', `entity_path=${path}`, 'key=pr-7', 'value={"state":"open","title":"Fix retry storm"}', 'confidence=0.9');
    expect(JSON.parse(written.stdout)).toMatchObject({ structuredContent: { unchanged: false, entry: { entity_path: path, key: 'pr-7', version: 1, confidence: 0.9 } } });
    const read = await inspector(KEY, '--method', 'tools/call', '--tool-name', 'memory_read', '--tool-arg', `entity_path=${path}`, 'key=pr-7');
    const result = JSON.parse(read.stdout) as { isError?: boolean; structuredContent: unknown };
    expect(result.isError ?? false).toBe(false);
    expect(result.structuredContent).toMatchObject({ value: { state: 'open', title: 'Fix retry storm' }, version: 1 });
    // And what it wrote is what the REST API serves.
    const rest = await cairn.call('GET', `/api/v1/entries/${path}/pr-7`, undefined, { 'x-cairn-api-key': KEY });
    expect(rest.body).toEqual(result.structuredContent);
  });

  it('shows a bad entity path as a tool error and a wrong key as a failed connection', async () => {
    const bad = await inspector(KEY, '--method', 'tools/call', '--tool-name', 'memory_read', '--tool-arg', 'entity_path=repos//acme', 'key=k');
    expect(JSON.parse(bad.stdout)).toMatchObject({ isError: true, structuredContent: { error: { code: 'VALIDATION_FAILED', details: [{ field: 'entity_path' }] } } });
    const refused = await inspector('wrong-key-0123456789', '--method', 'tools/list').catch((e: { code: number; stderr: string }) => e);
    expect(refused).toMatchObject({ code: 1 });
    expect((refused as { stderr: string }).stderr).toContain('UNAUTHENTICATED');
  });
});
