import { CairnClient } from 'cairn-memory-client';
import type { ClientOptions } from 'cairn-memory-client';
import { clientOperations } from './client-operations.ts';
import type { CallScope } from './call-tool.ts';
import type { OperationName } from './operations.ts';
import type { StdioSession } from './stdio.ts';

/** The address without any user info (`user:secret@`), for printing. */
const withoutUserInfo = (url: string): string => {
  try {
    const parsed = new URL(url);
    if (parsed.username === '' && parsed.password === '') return url;
    parsed.username = '';
    parsed.password = '';
    return parsed.href;
  } catch {
    return url.replace(/\/\/[^/@]*@/, '//');
  }
};

/** `cairn mcp` with a server address: every tool call goes to that server's REST API. */
export const forwardingSession = (options: ClientOptions): StdioSession => {
  const ops = clientOperations(new CairnClient(options));
  // One caller, the process that launched us: every call runs in the same scope.
  const scope: CallScope = {
    ops,
    onBug: (error: unknown) => process.stderr.write(`cairn mcp: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`),
  };
  return {
    operations: Object.keys(ops) as OperationName[],
    scopeOf: () => scope,
    banner: `forwarding to ${withoutUserInfo(options.url)}${options.apiKey ? ' with CAIRN_API_KEY' : ' without an API key'}`,
    close: async () => {},
  };
};
