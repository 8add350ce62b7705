import { describe, expect, it } from 'vitest';
import { namespaceOfSegment, namespaceSegment } from '../../packages/server/src/domain/names.ts';
import { isArchivedCollection, namespaceCollections, recordNamespaces } from '../../packages/server/src/services/archive/collections.ts';

describe('a namespace as one segment of a shared record name', () => {
  it('leaves a namespace without "/" or "%" as it is, and escapes those two', () => {
    for (const ns of ['default', 'acme', 'team-a.prod', 'ünï code', 'a%b/c', '%2F', 'a/b/c', '/', '%']) {
      const segment = namespaceSegment(ns);
      expect(segment).not.toContain('/');
      expect(namespaceOfSegment(segment)).toBe(ns);
      if (!/[/%]/.test(ns)) expect(segment).toBe(ns);
    }
    expect(namespaceSegment('acme/events')).toBe('acme%2Fevents');
    expect(namespaceSegment('100%/x')).toBe('100%25%2Fx');
    // Two namespaces never share a segment: "%2F" written in a namespace is not "/".
    expect(namespaceSegment('a%2Fb')).not.toBe(namespaceSegment('a/b'));
  });

  it('names the dedup collections of acme/events and acme apart, and reads each back as its namespace', () => {
    const theirs = namespaceCollections('acme/events', ['github']);
    const ours = namespaceCollections('acme', ['github']);
    expect(theirs.filter((c) => ours.includes(c))).toEqual([]);
    expect(theirs).toContain('dedup/acme%2Fevents/github');
    expect(ours).toContain('dedup/acme/events/github');
    for (const c of theirs) expect(recordNamespaces(c, 'id', {})).toEqual(['acme/events']);
    for (const c of ours) expect(recordNamespaces(c, 'id', {})).toEqual(['acme']);
    expect(recordNamespaces('dedup/100%25%2Fx/jira', 'id', {})).toEqual(['100%/x']);
  });

  it('takes the dedup collection an earlier release named a namespace holding "/" by, unless a name of today is read so', () => {
    expect(recordNamespaces('dedup/acme/b/github', 'id', {})).toEqual(['acme/b']);
    expect(isArchivedCollection('dedup/acme/b/events/datadog')).toBe(true);
    expect(recordNamespaces('dedup/acme/events/github', 'id', {})).toEqual(['acme']);
  });
});
