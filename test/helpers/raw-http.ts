import { connect, type Socket } from 'node:net';

/**
 * HTTP/1.1 spoken by hand over a socket, for what fetch will not send: an absolute-form
 * request target, a body that stops half-way, framing that does not add up, headers too large.
 */

export interface RawResponse {
  status: number;
  /** Header names lower-cased. */
  headers: Record<string, string>;
  /** Parsed JSON when the body is JSON, else its text. */
  body: any;
}

export interface RawConnection {
  socket: Socket;
  /** Every byte the server sent so far, as text. */
  received(): string;
  /** Settles when the socket closes (either side), with the time it did. */
  closed: Promise<number>;
}

/** Open a connection to the server at `url` and send `text` (more can be written on `socket`). */
export const openRaw = (url: string, text: string): Promise<RawConnection> =>
  new Promise((resolve, reject) => {
    const { hostname, port } = new URL(url);
    const socket = connect({ host: hostname, port: Number(port) });
    let received = '';
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => (received += chunk));
    const closed = new Promise<number>((done) => socket.once('close', () => done(Date.now())));
    // A reset after the answer (the server cutting a bad request off) is a close, not a failure.
    socket.on('error', () => {});
    socket.once('connect', () => {
      socket.write(text);
      resolve({ socket, received: () => received, closed });
    });
    socket.once('error', reject);
  });

/** Every response in `text`, in order (a connection may carry more than one). */
export const parseResponses = (text: string): RawResponse[] => {
  const responses: RawResponse[] = [];
  let rest = text;
  while (rest.startsWith('HTTP/1.1 ')) {
    const end = rest.indexOf('\r\n\r\n');
    if (end < 0) break;
    const [statusLine, ...lines] = rest.slice(0, end).split('\r\n');
    const headers: Record<string, string> = {};
    for (const line of lines) {
      const colon = line.indexOf(':');
      headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
    }
    const length = Number(headers['content-length'] ?? 0);
    const bodyText = Buffer.from(rest.slice(end + 4)).subarray(0, length).toString('utf8');
    let body: unknown = bodyText;
    try {
      body = bodyText ? JSON.parse(bodyText) : null;
    } catch {
      // Not JSON: keep the text, so a failing assertion shows what came back.
    }
    responses.push({ status: Number(statusLine!.split(' ')[1]), headers, body });
    rest = Buffer.from(rest.slice(end + 4)).subarray(length).toString('utf8');
  }
  return responses;
};

/**
 * Send `text` on a fresh connection and collect what comes back until the server closes it
 * (send `Connection: close`), or `timeoutMs` passes, when the socket is closed from here.
 */
export const rawExchange = async (url: string, text: string, timeoutMs = 5000): Promise<RawResponse[]> => {
  const connection = await openRaw(url, text);
  const timer = setTimeout(() => connection.socket.destroy(), timeoutMs);
  await connection.closed;
  clearTimeout(timer);
  return parseResponses(connection.received());
};
