import type { ToolAnnotations } from '@modelcontextprotocol/sdk/types.js';
import type { z } from 'zod';
import type { MemoryOperations, OperationName } from './operations.ts';

/**
 * One MCP tool: what a model sees (name, description, input schema, hints) and the
 * operation it adapts. A tool is offered only by a server that has its operation.
 */
export interface ToolDefinition {
  name: string;
  title: string;
  /** Written for a model: what it does, when to use it rather than another tool, what comes back. */
  description: string;
  /**
   * Documents the arguments in tools/list; the service behind the tool does the validating, with
   * a strict schema, so an argument not listed here is refused (test/unit/mcp-strict-args.test.ts).
   */
  input: z.ZodObject;
  annotations: ToolAnnotations;
  operation: OperationName;
  /** Call the operation; the answer becomes the tool's structured result. */
  call: (ops: MemoryOperations, args: Record<string, unknown>) => Promise<Record<string, unknown>>;
}

/** Read-only tools change nothing, so clients may call them without asking the user. */
export const READ_ONLY: ToolAnnotations = { readOnlyHint: true, openWorldHint: false };
