import { describe, expect, it } from 'vitest';
import { DamagedDataError } from '../../packages/server/src/domain/damaged-data.ts';
import { ServiceError } from '../../packages/server/src/domain/errors.ts';
import { outcomeUnknown } from '../../packages/server/src/domain/outcome-unknown.ts';
import { toolFailure } from '../../packages/server/src/mcp/tool-result.ts';

/** What a model is told to do next after a 503: only an outage is waited out and retried. */
const hintOf = (error: unknown): unknown => (toolFailure(error, 'req-1', () => {}).structuredContent as { error: { hint?: string } }).error.hint;

describe('MCP tool error hints', () => {
  it('tells a model to wait and retry an outage', () => {
    expect(hintOf(new ServiceError('UNAVAILABLE', 'the database is unavailable', { retryAfter: 2 }))).toMatch(/wait retry_after_s seconds, then retry/);
  });

  it('tells it to read before writing again when a write may have been stored', () => {
    const hint = hintOf(outcomeUnknown('the database did not answer in time'));
    expect(hint).toMatch(/may or may not have been stored.*memory_read/);
    expect(hint).not.toMatch(/then retry/);
  });

  it('tells it no retry mends damaged stored data', () => {
    const hint = hintOf(new DamagedDataError('segment 3 byte 4096 fails its checksum'));
    expect(hint).toMatch(/retrying will not help/);
    expect(JSON.stringify(toolFailure(new DamagedDataError('segment 3 byte 4096'), 'req-1', () => {}))).not.toContain('segment 3');
  });
});
