import { type CallToolResult, ErrorCode } from '@modelcontextprotocol/sdk/types.js';
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
    // A server offers a tool only when every scope it serves has the tool's operation.
    return toolSuccess(await tool.call(scope.ops as MemoryOperations, args));
  } catch (error) {
    return toolFailure(error, scope.requestId, scope.onBug);
  }
};
