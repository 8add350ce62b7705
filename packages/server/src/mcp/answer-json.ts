/**
 * The JSON text of a `/mcp` answer: one JSON-RPC message or a batch of them.
 *
 * A tool's result carries its answer twice, as the JSON text every client shows and as
 * structured content (tool-result.ts), and the text is that content's JSON by construction.
 * Serialized as it is, the answer would be written out twice over: a search's results cost
 * 0.16 ms to stringify for the text and as much again for the structured content (CPU profile,
 * 10 results). Here the structured content is written as the text it already is: the text
 * was made from that very object (tool-result.ts), whose keys and values nothing changes after.
 */
export const mcpAnswerJson = (body: unknown): string => (Array.isArray(body) ? `[${body.map(messageJson).join(',')}]` : messageJson(body));

interface ToolAnswer {
  jsonrpc: '2.0';
  id: string | number;
  result: { content: Array<{ type: string; text?: unknown }>; structuredContent: unknown; [key: string]: unknown };
}

const isToolAnswer = (message: unknown): message is ToolAnswer => {
  if (message === null || typeof message !== 'object') return false;
  const { jsonrpc, id, result } = message as Partial<ToolAnswer>;
  return (
    jsonrpc === '2.0' &&
    (typeof id === 'string' || typeof id === 'number') &&
    Object.keys(message).length === 3 &&
    result !== null &&
    typeof result === 'object' &&
    result.structuredContent !== undefined &&
    Array.isArray(result.content) &&
    result.content[0]?.type === 'text' &&
    typeof result.content[0].text === 'string'
  );
};

const messageJson = (message: unknown): string => {
  if (!isToolAnswer(message)) return JSON.stringify(message);
  const { structuredContent: _, ...rest } = message.result;
  const head = JSON.stringify(rest);
  return `{"jsonrpc":"2.0","id":${JSON.stringify(message.id)},"result":${head.slice(0, -1)},"structuredContent":${message.result.content[0]?.text as string}}}`;
};
