import { describe, expect, it } from 'vitest';
import { mcpAnswerJson } from '../../packages/server/src/mcp/answer-json.ts';

const toolAnswer = (id: string | number, structured: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({
  result: { content: [{ type: 'text', text: JSON.stringify(structured) }], structuredContent: structured, ...extra },
  jsonrpc: '2.0' as const,
  id,
});

describe('/mcp answer JSON', () => {
  it('writes a tool result whose structured content is its text as the same JSON a plain stringify gives', () => {
    const structured = { results: [{ entry: { key: 'pr-42', value: { title: 'Fix "retry" storm\n' } }, score: 0.5 }], mode: 'hybrid' };
    for (const message of [toolAnswer(7, structured), toolAnswer('abc', structured, { isError: true }), toolAnswer(0, {})]) {
      const text = mcpAnswerJson(message);
      expect(JSON.parse(text)).toEqual(message);
    }
    const batch = [toolAnswer(1, structured), { jsonrpc: '2.0', id: 2, error: { code: -32602, message: 'bad' } }];
    expect(JSON.parse(mcpAnswerJson(batch))).toEqual(batch);
  });

  it('stringifies every other message as it is', () => {
    const others = [
      { jsonrpc: '2.0', id: 1, result: { tools: [] } },
      { jsonrpc: '2.0', id: 1, result: { content: [{ type: 'image', data: 'x' }], structuredContent: { a: 1 } } },
      { jsonrpc: '2.0', id: 1, result: { content: [{ type: 'text', text: 'hi' }] } },
      { jsonrpc: '2.0', id: null, error: { code: -32700, message: 'Parse error' } },
      { ...toolAnswer(3, { a: 1 }), extra: true },
      null,
    ];
    for (const message of others) expect(mcpAnswerJson(message)).toBe(JSON.stringify(message));
  });
});
