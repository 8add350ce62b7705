import { type CallToolResult, ErrorCode } from '@modelcontextprotocol/sdk/types.js';
import type { DamagedDataError } from '../domain/damaged-data.ts';
import { validationFailed } from '../domain/errors.ts';
import { RpcError } from './rpc-error.ts';
import type { MemoryOperations } from './operations.ts';
import type { ToolDefinition } from './tool.ts';
import { toolFailure, toolSuccess } from './tool-result.ts';

/** What one tool call runs with: the caller's operations, and where its failures go. */
export interface CallScope {
  ops: Partial<MemoryOperations>;
  /** The id that finds this call in the server log, when there is one. */
  requestId?: string;
  /** A failure that is a bug, not the caller's: log it. */
  onBug: (error: unknown) => void;
  /** A call that met damaged stored data (answered 503): log it and count it; onBug when absent. */
  onDamaged?: (error: DamagedDataError) => void;
}

/**
 * One tools/call among `tools`: the operation's answer, or a tool error the model can act
 * on. What no change of arguments fixes (an unknown tool, a refused key, a bug) is thrown as
 * an RpcError (an McpError), which the caller answers as a JSON-RPC error.
 */
export const callTool = async (tools: readonly ToolDefinition[], name: string, args: Record<string, unknown>, scope: CallScope): Promise<CallToolResult> => {
  const tool = tools.find((t) => t.name === name);
  if (!tool) throw new RpcError(ErrorCode.InvalidParams, `unknown tool "${name}"; tools: ${tools.map((t) => t.name).join(', ')}`);
  try {
    // tools/list says `additionalProperties: false`: an argument the tool does not take (a
    // misspelt `ifVersion`) is refused here, the same on every transport, before any service
    // or server sees it, rather than ignored (a delete without its version check).
    const unknown = Object.keys(args).filter((name) => !Object.hasOwn(tool.input.shape, name));
    if (unknown.length > 0) throw validationFailed(unknown.slice(0, 20).map((name) => ({ field: name.slice(0, 100), message: 'is not a known field' })));
    // A server offers a tool only when every scope it serves has the tool's operation.
    return toolSuccess(await tool.call(scope.ops as MemoryOperations, args));
  } catch (error) {
    return toolFailure(error, scope.requestId, scope.onBug, scope.onDamaged);
  }
};
