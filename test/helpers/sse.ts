export interface SseEvent {
  event: string;
  data: string;
  id?: string;
}

/** Read a server-sent-events stream with fetch; `next(n)` waits for n more events. */
export const readSse = async (url: string, headers: Record<string, string> = {}) => {
  const controller = new AbortController();
  const res = await fetch(url, { headers, signal: controller.signal });
  if (!res.ok || !res.body) throw new Error(`stream answered ${res.status}`);
  const events: SseEvent[] = [];
  let comments = 0;
  let consumed = 0;
  let ended = false;
  let buffer = '';
  const decoder = new TextDecoder();
  const pump = (async () => {
    const reader = res.body!.getReader();
    try {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) {
          ended = true;
          return;
        }
        buffer += decoder.decode(value, { stream: true });
        let end: number;
        while ((end = buffer.indexOf('\n\n')) >= 0) {
          const frame = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          const event: SseEvent = { event: 'message', data: '' };
          const data: string[] = [];
          for (const line of frame.split('\n')) {
            if (line.startsWith(':')) comments += 1;
            else if (line.startsWith('event: ')) event.event = line.slice(7);
            else if (line.startsWith('data: ')) data.push(line.slice(6));
            else if (line.startsWith('id: ')) event.id = line.slice(4);
          }
          if (data.length > 0) events.push({ ...event, data: data.join('\n') });
        }
      }
    } catch {
      // Aborted by close().
    }
  })();
  return {
    status: res.status,
    headers: res.headers,
    async next(n: number, timeoutMs = 5000): Promise<SseEvent[]> {
      const deadline = Date.now() + timeoutMs;
      while (events.length < consumed + n) {
        if (Date.now() > deadline) throw new Error(`expected ${n} events, got ${events.length - consumed}`);
        await new Promise((r) => setTimeout(r, 10));
      }
      const out = events.slice(consumed, consumed + n);
      consumed += n;
      return out;
    },
    comments: () => comments,
    /** Whether the server ended the stream. */
    ended: () => ended,
    all: () => events,
    close() {
      controller.abort();
      void pump;
    },
  };
};
