import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Cairn, startCairn } from '../helpers/cairn.ts';
import { connectHttp } from '../helpers/mcp.ts';
import { type TestPostgres, startPostgres } from '../helpers/postgres.ts';
import { STRINGS, VALUES } from './hostile-requests.ts';

/**
 * The MCP twin of hostile-fields.test.ts: every argument of every tool, one at a time, set to
 * each hostile value while the other arguments stay valid, so the bad one gets past the rest
 * of the checks and reaches the services and the store. The arguments come from tools/list,
 * so a tool or argument added later is swept without a change here. Every call must resolve
 * to a result (a tool error naming the problem is fine); a server bug surfaces as an
 * "internal error" protocol error, and that is the failure this looks for.
 */

/** A valid argument object per tool, for the sweep to spoil. */
const VALID: Record<string, Record<string, unknown>> = {
  memory_briefing: { entity_path: 'fuzz/mcp' },
  memory_search: { query: 'retry storm' },
  memory_read: { entity_path: 'fuzz/mcp', key: 'k' },
  memory_list: { entity_path: 'fuzz/mcp' },
  memory_history: { entity_path: 'fuzz/mcp', key: 'k' },
  memory_write: { entity_path: 'fuzz/mcp', key: 'k', value: { ok: 1 } },
  memory_neighbours: { entity_path: 'fuzz/mcp', key: 'k', depth: 2 },
  memory_write_batch: { entries: [{ entity_path: 'fuzz/mcp', key: 'batched', value: { ok: 1 } }] },
  // Its own key, so deleting does not take away the entry the read tools are swept against.
  memory_delete: { entity_path: 'fuzz/mcp', key: 'doomed' },
  memory_record_outcome: { entries: [{ entity_path: 'fuzz/mcp', key: 'k' }], outcome: 'success' },
  cortex_digests: {},
};

/** `{a: {a: … 1}}` and `[[…]]`, `depth` levels deep, built without recursion. */
const nestedObject = (depth: number): unknown => {
  let node: unknown = 1;
  for (let i = 0; i < depth; i++) node = { a: node };
  return node;
};
const nestedArray = (depth: number): unknown => {
  let node: unknown[] = [];
  for (let i = 0; i < depth; i++) node = [node];
  return node;
};

/**
 * The SDK client serialises a request with JSON.stringify, which recurses: V8 overflows its
 * stack somewhere past 10,000 levels. Send 20,000 when this runtime manages it, else 2,000,
 * which is still far past the 64 levels a value may nest (domain/value.ts).
 */
const DEPTH = ((): number => {
  try {
    JSON.stringify(nestedObject(20_000));
    return 20_000;
  } catch {
    return 2_000;
  }
})();

/** Hostile argument values, as real JSON values: the SDK client serialises them. */
const HOSTILE: Array<{ label: string; value: unknown }> = [
  ...STRINGS.map((s) => ({ label: JSON.stringify(s.length > 40 ? `${s.slice(0, 10)}…×${s.length}` : s), value: s as unknown })),
  ...VALUES.map((v) => ({ label: typeof v === 'string' ? `string×${v.length}` : (JSON.stringify(v) ?? String(v)), value: v })),
  { label: `object nested ${DEPTH} deep`, value: nestedObject(DEPTH) },
  { label: `array nested ${DEPTH} deep`, value: nestedArray(DEPTH) },
  { label: 'U+0000 in a value', value: { text: 'nul \u0000 inside' } },
  { label: 'U+0000 in a key', value: { 'key \u0000': 'v' } },
  { label: 'U+0000 in an array', value: ['\u0000'] },
  { label: '50,000-element array', value: Array.from({ length: 50_000 }, (_, i) => i) },
  { label: '8 KB emoji key', value: { [`k${'🪨'.repeat(2000)}`]: 'v' } },
];

/** An admin key: every tool is then allowed, so each call reaches the service behind it. */
const KEY = 'mcp-hostile-args-admin-key';

/** What a failed tool call carries (tool-result.ts). */
interface ToolErrorBody {
  error?: { code?: unknown; message?: unknown; details?: Array<{ field: string; message: string }> };
}

type Outcome = 'ok' | `tool error ${string}` | `invalid params` | `protocol error ${number}` | 'thrown';

const sweep = async (cairn: Cairn, logLines: string[]): Promise<{ sent: number; outcomes: Record<string, number> }> => {
  const setup = await connectHttp(cairn.url, KEY);
  // The entries the read, history and outcome tools point at, so their valid base succeeds.
  for (const key of ['k', 'doomed']) {
    const seeded = await setup.callTool({ name: 'memory_write', arguments: { entity_path: 'fuzz/mcp', key, value: { ok: 1 } } });
    expect(seeded.isError, JSON.stringify(seeded.content)).not.toBe(true);
  }
  const { tools } = await setup.listTools();
  await setup.close();
  expect(tools.length).toBeGreaterThan(0);

  const calls: Array<{ tool: string; arg: string; label: string; args: Record<string, unknown> }> = [];
  for (const tool of tools) {
    const valid = VALID[tool.name];
    // A tool with no valid example here would be swept from an invalid base, reaching nothing.
    expect(valid, `a valid argument object for the tool ${tool.name} in VALID`).toBeDefined();
    for (const arg of Object.keys(tool.inputSchema.properties ?? {})) {
      for (const { label, value } of HOSTILE) calls.push({ tool: tool.name, arg, label, args: { ...valid, [arg]: value } });
    }
  }

  const outcomes: Record<string, number> = {};
  const failures: string[] = [];
  const fail = (c: (typeof calls)[number], why: string) => failures.push(`${c.tool} ${c.arg}=${c.label}: ${why.slice(0, 300)}`);
  // A client per worker: the endpoint is stateless, so each call is its own POST either way.
  const clients: Client[] = await Promise.all(Array.from({ length: 8 }, () => connectHttp(cairn.url, KEY)));
  let next = 0;
  await Promise.all(
    clients.map(async (client) => {
      for (let i = next++; i < calls.length; i = next++) {
        const c = calls[i]!;
        let outcome: Outcome;
        try {
          const result = await client.callTool({ name: c.tool, arguments: c.args });
          if (result.isError !== true) outcome = 'ok';
          else {
            const text = (result.content as Array<{ type: string; text?: string }>).find((part) => part.type === 'text')?.text ?? '';
            const body = (result.structuredContent ?? JSON.parse(text)) as ToolErrorBody;
            const code = String(body.error?.code);
            const message = body.error?.message;
            outcome = `tool error ${code}`;
            // A tool error must say what is wrong, in words, and never be a bug in disguise.
            if (typeof message !== 'string' || message.trim() === '') fail(c, `tool error without a message: ${text}`);
            else if (code === 'INTERNAL' || /internal (server )?error|TypeError|RangeError|ReferenceError|\bat \S+:\d+/i.test(message)) fail(c, `tool error reads like a bug: ${text}`);
            // The rest of the arguments are valid, so a refusal must name the spoilt one (one
            // naming another field, such as "entry", is a backend refusing what the schema let by).
            if (code === 'VALIDATION_FAILED' && !body.error?.details?.some((d) => d.field === c.arg || d.field.startsWith(`${c.arg}.`)))
              fail(c, `refused without naming ${c.arg}: ${String(message).slice(0, 160)}`);
          }
        } catch (error) {
          if (error instanceof McpError && error.code === ErrorCode.InvalidParams && !/internal/i.test(error.message)) outcome = 'invalid params';
          else if (error instanceof McpError) {
            outcome = `protocol error ${error.code}`;
            fail(c, `protocol error ${error.code}: ${error.message}`);
          } else {
            outcome = 'thrown';
            fail(c, `the call threw: ${String(error)}`);
          }
        }
        outcomes[outcome] = (outcomes[outcome] ?? 0) + 1;
      }
    }),
  );
  await Promise.all(clients.map((client) => client.close()));
  // A bug can also hide behind a proper answer: the PostgreSQL store turns an unexpected
  // driver error into UNAVAILABLE, and logs it at error level. With the database up, nothing
  // this sweep sends should log an error.
  for (const line of logLines) {
    const entry = JSON.parse(line) as { level: number; msg?: string; err?: { message?: string; stack?: string } };
    if (entry.level >= 50) failures.push(`logged at level ${entry.level}: ${entry.msg} ${entry.err?.stack ?? entry.err?.message ?? ''}`.slice(0, 600));
  }
  expect(failures, failures.slice(0, 10).join('\n')).toEqual([]);
  expect((await cairn.call('GET', '/health')).status).toBe(200);
  return { sent: calls.length, outcomes };
};

describe('hostile MCP tool arguments', () => {
  const cleanups: Array<() => Promise<void>> = [];
  // The PostgreSQL case's database starts while the filesystem case runs, not after it.
  let pgStarted: Promise<TestPostgres> | undefined;
  beforeAll(() => {
    pgStarted = startPostgres();
    // Handled here too: a start that fails before the case waits would be an unhandled rejection.
    pgStarted.catch(() => {});
    // Stopped last (cleanups run in reverse), after the server that uses it.
    cleanups.push(async () => (await pgStarted?.catch(() => undefined))?.stop());
  });
  afterAll(async () => {
    for (const c of cleanups.reverse()) await c();
  });

  it('answers every argument of every tool, spoilt one at a time, without an internal error (filesystem)', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'cairn-mcp-args-'));
    cleanups.push(() => rm(dir, { recursive: true, force: true }));
    const logLines: string[] = [];
    const cairn = await startCairn({ CAIRN_DATA_DIR: dir, CAIRN_RATE_LIMIT_RPM: '0', CAIRN_API_KEYS: KEY }, { logLines });
    cleanups.push(() => cairn.close());
    const { sent, outcomes } = await sweep(cairn, logLines);
    console.log(`filesystem: ${sent} spoilt tool calls (nesting ${DEPTH} deep)`, outcomes);
  }, 120_000);

  it('answers every argument of every tool, spoilt one at a time, without an internal error (PostgreSQL)', async () => {
    const pg = await pgStarted!;
    const logLines: string[] = [];
    const cairn = await startCairn({ CAIRN_DB_DSN: pg.dsn, CAIRN_RATE_LIMIT_RPM: '0', CAIRN_API_KEYS: KEY }, { logLines });
    cleanups.push(() => cairn.close());
    const { sent, outcomes } = await sweep(cairn, logLines);
    console.log(`postgres: ${sent} spoilt tool calls (nesting ${DEPTH} deep)`, outcomes);
  }, 120_000);
});
