import { describe, expect, it } from 'vitest';
import { deleteObjectsBody, failedDeletes, parseError, parseListPage, xmlText } from '../../packages/server/src/store/s3/s3-xml.ts';

/** The S3 documents Cairn reads and writes (store/s3/s3-xml.ts), as AWS and s3rver write them. */
describe('S3 XML', () => {
  it('reads a listing page: keys URL-encoded when it says so, entities, ETags with their quotes, truncation', () => {
    const page = parseListPage(`<?xml version="1.0" encoding="UTF-8"?>
<ListBucketResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><Name>b</Name><Prefix>cairn%2F</Prefix><KeyCount>2</KeyCount><MaxKeys>1000</MaxKeys><EncodingType>url</EncodingType><IsTruncated>true</IsTruncated>
<Contents><Key>cairn/v/a%20b%2Bc%C3%BC</Key><LastModified>2026-12-07T23:00:00.000Z</LastModified><ETag>&quot;9b2cf535f27731c974343645a3985328&quot;</ETag><Size>12</Size><StorageClass>STANDARD</StorageClass></Contents>
<Contents><Key>cairn/v/%26%3C</Key><ETag>"abc"</ETag></Contents></ListBucketResult>`);
    expect(page).toEqual({
      truncated: true,
      objects: [
        { key: 'cairn/v/a b+cü', etag: '"9b2cf535f27731c974343645a3985328"' },
        { key: 'cairn/v/&<', etag: '"abc"' },
      ],
    });
  });

  it('reads keys as written where the server does not encode them, and an empty last page', () => {
    const page = parseListPage('<ListBucketResult><IsTruncated>false</IsTruncated><Contents><Key>a&amp;b%20c</Key></Contents></ListBucketResult>');
    expect(page).toEqual({ truncated: false, objects: [{ key: 'a&b%20c', etag: null }] });
    expect(parseListPage('<ListBucketResult><IsTruncated>false</IsTruncated></ListBucketResult>')).toEqual({ truncated: false, objects: [] });
  });

  it('writes a batch delete with its keys escaped, and reads the keys it failed', () => {
    const body = deleteObjectsBody(['a/1', 'b&<"\'>']);
    expect(body).toContain('<Quiet>true</Quiet><Object><Key>a/1</Key></Object><Object><Key>b&amp;&lt;&quot;&apos;&gt;</Key></Object></Delete>');
    expect(failedDeletes('<DeleteResult><Error><Key>b&amp;c</Key><Code>AccessDenied</Code><Message>no</Message></Error><Error><Key>d</Key><Code>InternalError</Code></Error></DeleteResult>')).toEqual(['b&c', 'd']);
    expect(failedDeletes('<DeleteResult/>')).toEqual([]);
  });

  it("reads an error's code and message, and nothing from a body that is not S3's", () => {
    expect(parseError('<?xml version="1.0"?><Error><Code>PreconditionFailed</Code><Message>At least one of the pre-conditions you specified did not hold</Message><Condition>If-None-Match</Condition></Error>')).toEqual({
      code: 'PreconditionFailed',
      message: 'At least one of the pre-conditions you specified did not hold',
    });
    expect(parseError('<html>502 Bad Gateway</html>')).toEqual({});
    expect(parseError('')).toEqual({});
  });

  it('reads numeric entities and CDATA', () => {
    expect(xmlText('&#65;&#x42;<![CDATA[&amp;<x>]]>&unknown;')).toBe('AB&amp;<x>&unknown;');
  });
});
