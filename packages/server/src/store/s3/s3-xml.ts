/**
 * The few XML documents S3 speaks to Cairn: a listing's page (ListObjectsV2), a batch delete's
 * request and answer (DeleteObjects) and an error's body. Each is flat — elements holding text,
 * or holding such elements — so they are read by element name, not by a general XML parser.
 */

const ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" };

/** Text content with its entities (named and numeric) and CDATA sections read. */
export const xmlText = (raw: string): string =>
  raw
    .replace(/<!\[CDATA\[([\s\S]*?)\]\]>/g, (_, data: string) => data.replace(/[&<]/g, (c) => (c === '&' ? '&amp;' : '&lt;')))
    .replace(/&(#x[0-9a-fA-F]+|#\d+|[a-z]+);/g, (whole, name: string) => {
      if (name.startsWith('#x')) return String.fromCodePoint(Number.parseInt(name.slice(2), 16));
      if (name.startsWith('#')) return String.fromCodePoint(Number.parseInt(name.slice(1), 10));
      return ENTITIES[name] ?? whole;
    });

/** Text escaped for an element's content. */
export const xmlEscape = (text: string): string =>
  text.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&apos;' })[c] as string);

/** The raw contents of every `<tag>…</tag>` in `xml`, in order (tags of that name must not nest). */
export const xmlElements = (xml: string, tag: string): string[] => {
  const found: string[] = [];
  const open = new RegExp(`<${tag}(?:\\s[^>]*)?>`, 'g');
  const close = `</${tag}>`;
  for (let match = open.exec(xml); match; match = open.exec(xml)) {
    const start = match.index + match[0].length;
    const end = xml.indexOf(close, start);
    if (end < 0) break;
    found.push(xml.slice(start, end));
    open.lastIndex = end + close.length;
  }
  return found;
};

/** The text of the first `<tag>` in `xml`, entities read; undefined when there is none. */
export const xmlValue = (xml: string, tag: string): string | undefined => {
  const raw = xmlElements(xml, tag)[0];
  return raw === undefined ? undefined : xmlText(raw);
};

export interface ListedObject {
  key: string;
  etag: string | null;
}

export interface ListPage {
  objects: ListedObject[];
  truncated: boolean;
}

/**
 * A ListObjectsV2 page. Keys come URL-encoded when the answer says so (`EncodingType` url, as
 * Cairn asks: a key may hold characters XML cannot carry), as they are otherwise.
 */
export const parseListPage = (xml: string): ListPage => {
  const encoded = xmlValue(xml, 'EncodingType') === 'url';
  const objects = xmlElements(xml, 'Contents').flatMap((block) => {
    const raw = xmlValue(block, 'Key');
    if (raw === undefined) return [];
    const etag = xmlValue(block, 'ETag');
    return [{ key: encoded ? decodeURIComponent(raw.replace(/\+/g, ' ')) : raw, etag: etag || null }];
  });
  return { objects, truncated: xmlValue(xml, 'IsTruncated') === 'true' };
};

/** A DeleteObjects request body for `keys`, quiet: the answer lists only the keys it could not delete. */
export const deleteObjectsBody = (keys: readonly string[]): string =>
  `<?xml version="1.0" encoding="UTF-8"?><Delete xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><Quiet>true</Quiet>${keys
    .map((key) => `<Object><Key>${xmlEscape(key)}</Key></Object>`)
    .join('')}</Delete>`;

/** The keys a DeleteObjects answer says were not deleted. */
export const failedDeletes = (xml: string): string[] => xmlElements(xml, 'Error').flatMap((block) => {
  const key = xmlValue(block, 'Key');
  return key === undefined ? [] : [key];
});

/** An error answer's code and message (S3's `<Error><Code>…</Code><Message>…</Message></Error>`). */
export const parseError = (xml: string): { code?: string; message?: string } => {
  const code = xmlValue(xml, 'Code');
  const message = xmlValue(xml, 'Message');
  return { ...(code ? { code } : {}), ...(message ? { message } : {}) };
};
