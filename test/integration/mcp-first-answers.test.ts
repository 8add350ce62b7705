import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLI_ARGS } from '../helpers/cli-args.ts';

/**
 * An MCP client that launches `cairn mcp` waits for its initialize to be answered before it
 * offers the tools to its model. The built-in embedder's warm-up (reading the word table, a
 * few tenths of a second of the main thread) waits for that first answer instead of holding
 * it back. The process's stdout and stderr go to one pipe here (a shell's 2>&1; both are
 * written synchronously), so the order of the lines in it is the order they were written.
 */
let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'cairn-mcp-first-'));
});
afterAll(() => rm(dir, { recursive: true, force: true }));

describe('cairn mcp serving memory itself', () => {
  it('answers initialize before it warms the search up, then warms it up and serves the tools', async () => {
    const child = spawn('/bin/sh', ['-c', 'exec "$0" "$@" 2>&1', process.execPath, ...CLI_ARGS, 'mcp'], {
      env: { PATH: process.env.PATH ?? '', HOME: dir, CAIRN_DATA_DIR: join(dir, 'data'), CAIRN_LOG_LEVEL: 'debug' },
      stdio: ['pipe', 'pipe', 'inherit'],
    });
    const lines: Array<{ id?: number; msg?: string; result?: any }> = [];
    const waiters: Array<() => void> = [];
    createInterface({ input: child.stdout }).on('line', (line) => {
      // Protocol messages and log lines are JSON; the banner is a line of text.
      lines.push(line.startsWith('{') ? (JSON.parse(line) as (typeof lines)[number]) : { msg: line });
      for (const wake of waiters.splice(0)) wake();
    });
    const seen = async (found: (line: (typeof lines)[number]) => boolean, what: string): Promise<number> => {
      const deadline = Date.now() + 20_000;
      for (;;) {
        const at = lines.findIndex(found);
        if (at >= 0) return at;
        if (Date.now() > deadline) throw new Error(`no ${what} in:\n${lines.map((l) => JSON.stringify(l)).join('\n')}`);
        await new Promise<void>((wake) => {
          waiters.push(wake);
          setTimeout(wake, 200);
        });
      }
    };
    const send = (message: object) => child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', ...message })}\n`);
    try {
      send({ id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'first-answers', version: '1' } } });
      const initialized = await seen((l) => l.id === 1, 'answer to initialize');
      expect(lines[initialized]?.result?.serverInfo?.name).toBeDefined();
      send({ method: 'notifications/initialized' });
      send({ id: 2, method: 'tools/list' });
      const warming = await seen((l) => l.msg === 'search warm-up started', 'warm-up');
      expect(warming).toBeGreaterThan(initialized);
      await seen((l) => l.msg === 'search warmed up', 'end of the warm-up');
      expect((await seen((l) => l.id === 2, 'tool list')) >= 0 && lines.find((l) => l.id === 2)?.result?.tools.length).toBeGreaterThan(0);
      send({ id: 3, method: 'tools/call', params: { name: 'memory_write', arguments: { entity_path: 'notes', key: 'k', value: 'the retry storm was fixed with jitter' } } });
      await seen((l) => l.id === 3, 'answer to the write');
      send({ id: 4, method: 'tools/call', params: { name: 'memory_search', arguments: { query: 'how was the retry storm fixed' } } });
      const searched = lines[await seen((l) => l.id === 4, 'answer to the search')];
      expect(JSON.stringify(searched?.result?.structuredContent)).toContain('jitter');
    } finally {
      child.stdin.end();
      await new Promise((resolve) => child.once('exit', resolve));
    }
  });
});
