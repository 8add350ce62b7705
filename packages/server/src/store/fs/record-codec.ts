import { crc32 } from 'node:zlib';

/**
 * One record on disk: [u32 payload length][u32 CRC-32 of payload][payload (UTF-8 JSON)].
 * The checksum lets start-up tell a torn or rotten record from a good one.
 */
const HEADER = 8;
/**
 * Entries are bounded by the request body limit, far below this; a length above it on disk is
 * corruption. Writers are held to it too (`encodeJson` refuses more), so the log never holds a
 * record its own reader would refuse.
 */
export const MAX_PAYLOAD = 16 * 1024 * 1024;

/** A record the reader would take for corruption, refused before it reaches the log. */
export class RecordTooLarge extends Error {
  readonly bytes: number;
  constructor(bytes: number) {
    super(`a record of ${bytes} bytes passes the record bound of ${MAX_PAYLOAD}`);
    this.name = 'RecordTooLarge';
    this.bytes = bytes;
  }
}

/** A record of JSON text already made, for a writer that builds the text itself (checkpoint blocks). */
export const encodeJson = (json: string): Buffer => {
  const body = Buffer.from(json, 'utf8');
  if (body.length > MAX_PAYLOAD) throw new RecordTooLarge(body.length);
  const record = Buffer.allocUnsafe(HEADER + body.length);
  record.writeUInt32LE(body.length, 0);
  record.writeUInt32LE(crc32(body), 4);
  body.copy(record, HEADER);
  return record;
};

export const encodeRecord = (payload: unknown): Buffer => encodeJson(JSON.stringify(payload));

export type Decoded =
  | { kind: 'record'; payload: unknown; offset: number; length: number }
  | { kind: 'end'; offset: number }
  | { kind: 'bad'; offset: number; reason: string; cutShort?: true };

/**
 * Walk the records of `buf` from `start`. Stops at the end, or at the first record that is
 * cut short (`cutShort`: the buffer ends inside it) or fails its checksum; what that means (torn tail or real damage) is the
 * caller's call, since only it knows where the buffer sits in the log.
 */
export function* decodeRecords(buf: Buffer, start = 0): Generator<Decoded> {
  let offset = start;
  while (offset < buf.length) {
    if (buf.length - offset < HEADER) {
      yield { kind: 'bad', offset, reason: 'record header cut short', cutShort: true };
      return;
    }
    const length = buf.readUInt32LE(offset);
    if (length > MAX_PAYLOAD) {
      yield { kind: 'bad', offset, reason: `implausible record length ${length}` };
      return;
    }
    if (offset + HEADER + length > buf.length) {
      yield { kind: 'bad', offset, reason: 'record body cut short', cutShort: true };
      return;
    }
    const body = buf.subarray(offset + HEADER, offset + HEADER + length);
    if (crc32(body) !== buf.readUInt32LE(offset + 4)) {
      yield { kind: 'bad', offset, reason: 'checksum mismatch' };
      return;
    }
    let payload: unknown;
    try {
      payload = JSON.parse(body.toString('utf8'));
    } catch {
      yield { kind: 'bad', offset, reason: 'record is not JSON' };
      return;
    }
    yield { kind: 'record', payload, offset, length: HEADER + length };
    offset += HEADER + length;
  }
  yield { kind: 'end', offset };
}

/** Decode a single record read back from a known location. */
export const decodeOne = (buf: Buffer): unknown => {
  const first = decodeRecords(buf).next().value;
  if (!first || first.kind !== 'record') throw new Error(`unreadable record: ${first?.kind === 'bad' ? first.reason : 'empty'}`);
  return first.payload;
};

/**
 * The first offset at or after `from` where an intact record starts (a plausible length that
 * fits, a matching checksum, a JSON object), or null. Recovery asks it after a bad record at
 * the end of the log: a write torn by a crash is the log's last bytes, so a good record after
 * the bad one makes the bad one damage, not a torn tail. A record's payload is JSON text,
 * which never holds a record's binary header unescaped, so no record is found inside one.
 */
export const followsRecord = (buf: Buffer, from: number): number | null => {
  for (let offset = from; offset + HEADER < buf.length; offset++) {
    const length = buf.readUInt32LE(offset);
    // An empty payload is no JSON (and every zero-filled stretch would pass its checksum).
    if (length < 2 || length > MAX_PAYLOAD || offset + HEADER + length > buf.length) continue;
    const body = buf.subarray(offset + HEADER, offset + HEADER + length);
    if (crc32(body) !== buf.readUInt32LE(offset + 4)) continue;
    try {
      const payload: unknown = JSON.parse(body.toString('utf8'));
      if (payload !== null && typeof payload === 'object') return offset;
    } catch {
      // Not a record after all.
    }
  }
  return null;
};
