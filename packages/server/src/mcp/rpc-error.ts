import { McpError } from '@modelcontextprotocol/sdk/types.js';

/**
 * A JSON-RPC error the server answers with, its message as written. The SDK's McpError puts
 * "MCP error <code>: " before the message it is given, and the SDK answers a thrown error with
 * that message; a client's SDK then prefixes it again when it raises the answer, so a caller
 * read "MCP error -32001: MCP error -32001: Cairn refused the API key…".
 */
export class RpcError extends McpError {
  constructor(code: number, message: string, data?: unknown) {
    super(code, message, data);
    this.message = message;
  }
}
