import { type CallToolResult, ErrorCode } from '@modelcontextprotocol/sdk/types.js';
import { RpcError } from './rpc-error.ts';
import { CairnError } from 'cairn-memory-client';
import { DAMAGED_DATA_DETAIL, DamagedDataError, damagedDataAnswer } from '../domain/damaged-data.ts';
import { type FieldIssue, ServiceError } from '../domain/errors.ts';
import { OUTCOME_UNKNOWN_DETAIL } from '../domain/outcome-unknown.ts';

/** JSON-RPC error code for a refused API key: the implementation-defined server-error range. */
export const UNAUTHENTICATED_RPC_CODE = -32001;

/** What a model should do next, by error code: the point of a tool error is that it can act on it. */
const HINTS: Record<string, string> = {
  VALIDATION_FAILED: 'Fix the fields named in details and call again.',
  BAD_REQUEST: 'Fix the arguments and call again.',
  NOT_FOUND: 'Nothing live at that entity_path and key: check both (memory_list shows the keys under a path).',
  CONFLICT: 'The entry changed since you read it: read it again, then retry with its current version as if_version.',
  PAYLOAD_TOO_LARGE: 'Send less: the message says what is too large (a value is at most 512 KiB, a whole call at most 1 MiB); split it or keep a summary.',
  FORBIDDEN: 'Your API key does not allow this (scope or entity path prefix).',
  RATE_LIMITED: 'Too many requests: wait retry_after_s seconds, then retry.',
  UNAVAILABLE: 'The storage backend is not answering: wait retry_after_s seconds, then retry.',
  NETWORK: 'The Cairn server cannot be reached: tell the user it may be down.',
};

/**
 * The hints of the two 503s that waiting does not cure, told apart by their `details` marker:
 * damaged stored data (DAMAGED_DATA_DETAIL), and a write whose outcome is unknown, which a
 * retry could store twice (an outcome counted twice, an if_version refused by its own write).
 */
const MARKED_HINTS: Array<{ field: string; message: string; hint: string }> = [
  {
    ...DAMAGED_DATA_DETAIL,
    hint: 'Stored data this call needs is damaged: retrying will not help. Tell the user an operator must restore it from a backup (the request id finds it in the server log).',
  },
  {
    ...OUTCOME_UNKNOWN_DETAIL,
    hint: 'The write may or may not have been stored: read the entry (memory_read) to see before making it again; do not simply retry.',
  },
];

const markedHint = (details: FieldIssue[] | undefined): string | undefined =>
  MARKED_HINTS.find((m) => (details ?? []).some((d) => d.field === m.field && d.message === m.message))?.hint;

/** A successful call: the operation's answer as JSON text (every client shows it) and as structured content. */
export const toolSuccess = (result: Record<string, unknown>): CallToolResult => ({
  content: [{ type: 'text', text: JSON.stringify(result) }],
  structuredContent: result,
});

interface Coded {
  code: string;
  message: string;
  details: FieldIssue[] | undefined;
  retryAfter: number | undefined;
  requestId: string | undefined;
}

const coded = (error: unknown, requestId: string | undefined): Coded | null => {
  if (error instanceof ServiceError) return { code: error.code, message: error.message, details: error.details, retryAfter: error.retryAfter, requestId };
  if (error instanceof CairnError) return { code: error.code, message: error.message, details: error.details, retryAfter: error.retryAfter, requestId: error.requestId };
  return null;
};

/**
 * A failed call, as SPEC §9 wants it: what the model can fix or wait out (bad input, a
 * missing entry, a conflict, a busy backend) is a tool error it reads, with the same code,
 * message and field details as the REST answer; a refused key and server bugs are protocol
 * errors, because no change of arguments fixes them.
 */
export const toolFailure = (
  error: unknown,
  requestId: string | undefined,
  onBug: (error: unknown) => void,
  onDamaged: (error: DamagedDataError) => void = onBug,
): CallToolResult => {
  // Damaged stored data is the REST answer's 503 (domain/damaged-data.ts), logged by `onDamaged`.
  if (error instanceof DamagedDataError) {
    onDamaged(error);
    return toolFailure(damagedDataAnswer(error), requestId, onBug, onDamaged);
  }
  const failure = coded(error, requestId);
  if (failure?.code === 'UNAUTHENTICATED') throw new RpcError(UNAUTHENTICATED_RPC_CODE, `Cairn refused the API key: ${failure.message}`);
  if (!failure || failure.code === 'INTERNAL') {
    onBug(error);
    const id = failure?.requestId ?? requestId;
    throw new RpcError(ErrorCode.InternalError, `internal error in Cairn${id ? ` (request id ${id})` : ''}`);
  }
  const hint = markedHint(failure.details) ?? HINTS[failure.code];
  const body = {
    error: {
      code: failure.code,
      message: failure.message,
      ...(failure.details ? { details: failure.details } : {}),
      ...(failure.retryAfter !== undefined ? { retry_after_s: failure.retryAfter } : {}),
      ...(failure.requestId ? { request_id: failure.requestId } : {}),
      ...(hint ? { hint } : {}),
    },
  };
  return { isError: true, content: [{ type: 'text', text: JSON.stringify(body) }], structuredContent: body };
};
