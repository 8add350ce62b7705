import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { CairnClient } from '../../packages/client/src/index.ts';
import { type ServerSentEvent, SseParserStream } from '../../packages/client/src/sse.ts';

/** Feed the chunks through the parser as one stream; answer every event it dispatched. */
const parse = async (chunks: string[]): Promise<ServerSentEvent[]> => {
  const text = new ReadableStream<string>({
    start(controller) {
      for (const chunk of chunks) controller.enqueue(chunk);
      controller.close();
    },
  });
  const events: ServerSentEvent[] = [];
  for await (const event of text.pipeThrough(new SseParserStream())) events.push(event);
  return events;
};

/** Every way to cut `text` into two chunks, and into three. */
function* cuts(text: string): Generator<string[]> {
  for (let i = 0; i <= text.length; i++) {
    yield [text.slice(0, i), text.slice(i)];
    for (let j = i; j <= text.length; j++) yield [text.slice(0, i), text.slice(i, j), text.slice(j)];
  }
}

describe('client SSE parser', () => {
  it('reads events with a type, data and id, defaulting the type to "message"', async () => {
    expect(await parse(['event: entry\nid: 7\ndata: {"key":"k"}\n\ndata: plain\n\n'])).toEqual([
      { event: 'entry', data: '{"key":"k"}', id: '7' },
      { event: 'message', data: 'plain', id: '7' },
    ]);
  });

  it('gives the same events however the text is cut into chunks', async () => {
    // CRLF, LF and CR endings, a comment, a multi-line data field and an unknown field.
    const text = ': hello\r\nevent: entry\r\ndata: one\r\ndata: two\r\n\r\nretry: 3000\ndata:x\rid: 9\r\r';
    const whole = await parse([text]);
    expect(whole).toEqual([
      { event: 'entry', data: 'one\ntwo', id: '' },
      { event: 'message', data: 'x', id: '9' },
    ]);
    for (const chunks of cuts(text)) expect(await parse(chunks), JSON.stringify(chunks)).toEqual(whole);
  });

  it('treats a CR ending one chunk and a LF starting the next as one line ending', async () => {
    // Were the LF a line of its own, it would be a blank line and dispatch "a" alone.
    expect(await parse(['data: a\r', '\ndata: b\r', '\n\r', '\n'])).toEqual([{ event: 'message', data: 'a\nb', id: '' }]);
    // A CR at a chunk's end followed by something else is still a line ending.
    expect(await parse(['data: a\r', 'data: b\r', '\r'])).toEqual([{ event: 'message', data: 'a\nb', id: '' }]);
    // Empty chunks in between change nothing.
    expect(await parse(['data: a\r', '', '\n', '', '\r\n'])).toEqual([{ event: 'message', data: 'a', id: '' }]);
  });

  it('removes one leading space from a value, no more, and reads a line without a colon as a field with an empty value', async () => {
    expect(await parse(['data:  two spaces\ndata:none\ndata\n\n'])).toEqual([{ event: 'message', data: ' two spaces\nnone\n', id: '' }]);
    expect(await parse(['data\n\n'])).toEqual([{ event: 'message', data: '', id: '' }]);
    expect(await parse(['data: a:b: c\n\n'])).toEqual([{ event: 'message', data: 'a:b: c', id: '' }]);
  });

  it('dispatches nothing for an event without data, comments, or unknown fields', async () => {
    expect(await parse([': keep-alive\n\n', 'event: entry\n\n', 'retry: 3000\n\n', 'foo: bar\n\n', '\n\n'])).toEqual([]);
  });

  it('forgets the event type after each dispatch but keeps the last id, ignoring an id with NUL', async () => {
    expect(await parse(['event: entry\nid: 1\ndata: a\n\ndata: b\n\nid: x\0y\ndata: c\n\nid\ndata: d\n\n'])).toEqual([
      { event: 'entry', data: 'a', id: '1' },
      { event: 'message', data: 'b', id: '1' },
      { event: 'message', data: 'c', id: '1' },
      { event: 'message', data: 'd', id: '' },
    ]);
  });

  it('drops an event the stream ends before its blank line', async () => {
    expect(await parse(['data: a\n\ndata: b\n'])).toEqual([{ event: 'message', data: 'a', id: '' }]);
    expect(await parse(['data: a\n\ndata: b'])).toEqual([{ event: 'message', data: 'a', id: '' }]);
    expect(await parse(['data: a\r'])).toEqual([]);
  });

  it('reads UTF-8 split inside a character once a TextDecoderStream is before it', async () => {
    const bytes = new TextEncoder().encode('data: café ☕ 𝄞\n\n');
    const events: ServerSentEvent[] = [];
    for (let cut = 0; cut <= bytes.length; cut++) {
      const raw = new ReadableStream<Uint8Array>({
        start(controller) {
          controller.enqueue(bytes.slice(0, cut));
          controller.enqueue(bytes.slice(cut));
          controller.close();
        },
      });
      for await (const event of raw.pipeThrough(new TextDecoderStream()).pipeThrough(new SseParserStream())) events.push(event);
    }
    expect(events).toHaveLength(bytes.length + 1);
    expect(new Set(events.map((e) => e.data))).toEqual(new Set(['café ☕ 𝄞']));
  });
});

describe('client watch over SSE', () => {
  const servers: Array<{ close(): void; closeAllConnections(): void }> = [];
  afterEach(() => {
    for (const s of servers.splice(0)) {
      s.closeAllConnections();
      s.close();
    }
  });

  it('yields the entry events of a stream written in awkward pieces, and closes it when the loop ends', async () => {
    const entry = (key: string) => ({ entity_path: 'a/b', key, value: 'naïve ☕', version: 1 });
    let closed!: () => void;
    const connectionClosed = new Promise<void>((resolve) => (closed = resolve));
    const server = createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.on('close', () => closed());
      const frames = `retry: 3000\r\n\r\n: keep-alive\r\n\r\nevent: other\r\ndata: {}\r\n\r\nevent: entry\r\ndata: ${JSON.stringify(entry('one'))}\r\n\r\nevent: entry\r\ndata: ${JSON.stringify(entry('two'))}\r\n\r\n`;
      const bytes = Buffer.from(frames);
      // Cut inside the CRLFs, the field names and the multi-byte characters.
      const pieces = [0, 13, 14, 40, 41, 57, 63, 99, 100, 101, 150, bytes.length].filter((n) => n <= bytes.length);
      for (let i = 1; i < pieces.length; i++) res.write(bytes.subarray(pieces[i - 1], pieces[i]));
      // The stream stays open, as the server's does.
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    servers.push(server);
    const client = new CairnClient({ url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` });

    const seen: string[] = [];
    for await (const e of client.watch({ reconnect: false })) {
      expect(e.value).toBe('naïve ☕');
      seen.push(e.key);
      if (seen.length === 2) break;
    }
    expect(seen).toEqual(['one', 'two']);
    await connectionClosed;
  });
});
