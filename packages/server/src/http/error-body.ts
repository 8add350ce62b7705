import { ERROR_STATUS, type ErrorCode, type FieldIssue } from '../domain/errors.ts';

export interface ErrorBody {
  error: { code: ErrorCode | 'INTERNAL'; message: string; request_id: string; details?: FieldIssue[] };
}

export const errorBody = (code: ErrorCode | 'INTERNAL', message: string, requestId: string, details?: FieldIssue[]): ErrorBody => ({
  error: { code, message, request_id: requestId, ...(details ? { details } : {}) },
});

/** The SPEC §4 code for a status fastify or a plugin chose. */
export const codeForStatus = (status: number): ErrorCode | 'INTERNAL' => {
  for (const [code, s] of Object.entries(ERROR_STATUS)) if (s === status) return code as ErrorCode;
  if (status >= 500) return 'INTERNAL';
  return 'BAD_REQUEST';
};
