import { z } from 'zod';
import type { ClientOptions } from 'cairn-memory-client';
import { ConfigError } from '../config.ts';
import { AgentIdSchema } from '../domain/names.ts';
import { userDataDir } from '../domain/user-data-dir.ts';
import { servingProcess } from './mcp-owner-note.ts';

/**
 * The settings of the commands that talk to a running server (`cairn mcp`, `cairn read`, …):
 * only these variables, so a client command never fails over a server setting it ignores.
 */
export const ClientEnv = z.object({
  CAIRN_HTTP_URL: z
    .url({ protocol: /^https?$/, error: 'expected the server address, e.g. http://127.0.0.1:8080' })
    // A password there is not how Cairn authenticates (fetch refuses such a URL), and would be
    // printed by every message naming the address: the key goes in CAIRN_API_KEY.
    // Checked only of an address that parses: zod runs a refinement after z.url failed too,
    // and `new URL` threw "Invalid URL" for one with no scheme (127.0.0.1:8080).
    .refine((url) => {
      if (!URL.canParse(url)) return true;
      const { username, password } = new URL(url);
      return username === '' && password === '';
    }, 'must not hold a user name or password (user:secret@); put the API key in CAIRN_API_KEY'),
  // Sent as a header, which carries visible ASCII alone: anything else failed every request as
  // "cannot reach Cairn", with the whole value in the message. Said here, never echoing it.
  CAIRN_API_KEY: z
    .string()
    .min(1)
    .regex(
      /^[\x21-\x7e]+$/,
      'is not a key: it holds a space, a line break or a character outside ASCII (a placeholder such as "…" pasted as it is, or the whole output of `cairn keys create`); set it to the key alone',
    )
    .optional(),
  CAIRN_AGENT_ID: AgentIdSchema.optional(),
});

/**
 * The options of a command that talks to a server: CAIRN_HTTP_URL (or --url) with CAIRN_API_KEY;
 * with no address, the `cairn mcp` that has the data directory open (CAIRN_DATA_DIR, else the
 * one `cairn mcp` uses by default), with the key it made up, so that a coding agent's hooks
 * reach the memory its MCP server keeps.
 */
export const clientOptionsFrom = (env: Record<string, string | undefined>, flags: { url?: string } = {}): ClientOptions => {
  const merged: Record<string, string | undefined> = { ...env };
  if (flags.url !== undefined) merged.CAIRN_HTTP_URL = flags.url;
  for (const [k, v] of Object.entries(merged)) if (v === '') delete merged[k];
  const local = merged.CAIRN_HTTP_URL === undefined ? servingProcess(merged.CAIRN_DATA_DIR ?? userDataDir(merged)) : null;
  if (local) {
    merged.CAIRN_HTTP_URL = local.url;
    merged.CAIRN_API_KEY = local.key;
  }
  const parsed = ClientEnv.safeParse(merged);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((issue) =>
      issue.path[0] === 'CAIRN_HTTP_URL' && merged.CAIRN_HTTP_URL === undefined
        ? 'CAIRN_HTTP_URL: not set; give the address of a running server, e.g. CAIRN_HTTP_URL=http://127.0.0.1:8080 (or --url); `cairn serve` starts one (a `cairn mcp` that keeps memory itself is found by its data directory, CAIRN_DATA_DIR)'
        : `${String(issue.path[0] ?? '?')}: ${issue.message}`,
    );
    throw new ConfigError(`invalid configuration:\n  ${lines.join('\n  ')}`);
  }
  const e = parsed.data;
  return { url: e.CAIRN_HTTP_URL, ...(e.CAIRN_API_KEY ? { apiKey: e.CAIRN_API_KEY } : {}), ...(e.CAIRN_AGENT_ID ? { agentId: e.CAIRN_AGENT_ID } : {}) };
};
