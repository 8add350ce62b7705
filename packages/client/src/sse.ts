/**
 * A server-sent-events parser, so the client needs no dependency to read `/api/v1/stream`.
 * It follows the WHATWG event-stream rules
 * (https://html.spec.whatwg.org/multipage/server-sent-events.html#event-stream-interpretation)
 * on text already decoded (by a TextDecoderStream, which also drops the byte-order mark).
 */

/** One dispatched event. */
export interface ServerSentEvent {
  /** The `event` field; "message" when the event named none. */
  event: string;
  /** The `data` lines, joined with "\n". */
  data: string;
  /** The last event id seen on the stream (it carries over to later events); "" when none. */
  id: string;
}

/**
 * Text in, events out. Lines end in CRLF, LF or CR, and a chunk may end anywhere: inside a
 * field name, or between the CR and LF of one line ending. An event that the stream ends
 * before its blank line is dropped, as the spec says.
 */
export class SseParserStream extends TransformStream<string, ServerSentEvent> {
  constructor() {
    /** The current line, while its ending has not arrived yet. */
    let partial = '';
    /** The last chunk ended in CR: a LF opening the next one ends the same line. */
    let afterCR = false;
    let event = '';
    let data: string[] = [];
    let id = '';

    const line = (text: string, controller: TransformStreamDefaultController<ServerSentEvent>): void => {
      if (text === '') {
        // A blank line dispatches; no data line means nothing to dispatch (the spec's empty buffer).
        if (data.length > 0) controller.enqueue({ event: event || 'message', data: data.join('\n'), id });
        event = '';
        data = [];
        return;
      }
      if (text.startsWith(':')) return; // a comment (the server's keep-alives)
      const colon = text.indexOf(':');
      const field = colon === -1 ? text : text.slice(0, colon);
      let value = colon === -1 ? '' : text.slice(colon + 1);
      if (value.startsWith(' ')) value = value.slice(1);
      if (field === 'event') event = value;
      else if (field === 'data') data.push(value);
      else if (field === 'id' && !value.includes('\0')) id = value;
      // `retry` and unknown fields are ignored: reconnection is the caller's own policy.
    };

    super({
      transform(chunk, controller) {
        let start = 0;
        if (afterCR && chunk.startsWith('\n')) start = 1;
        if (chunk !== '') afterCR = false;
        for (let i = start; i < chunk.length; i++) {
          const c = chunk.charCodeAt(i);
          if (c !== 10 && c !== 13) continue; // LF, CR
          line(partial + chunk.slice(start, i), controller);
          partial = '';
          if (c === 13) {
            if (i + 1 === chunk.length) afterCR = true;
            else if (chunk.charCodeAt(i + 1) === 10) i++;
          }
          start = i + 1;
        }
        partial += chunk.slice(start);
      },
      // At the end, an unfinished line or event is discarded: nothing to flush.
    });
  }
}
