import { useCallback, useEffect, useState } from 'preact/hooks';
import { ApiError } from '../api/client.ts';
import type { Entry, ListResponse } from 'cairn-memory-client';
import { useApp } from '../context.ts';
import { addressOf, isUnder } from './address.ts';

/** Pages of 1,000 fetched for one view; past this the view says it is partial. */
const MAX_PAGES = 5;

export interface EntriesState {
  entries: Map<string, Entry>;
  loading: boolean;
  error: ApiError | null;
  /** Prefixes whose listing stopped at MAX_PAGES. */
  truncated: Set<string>;
  reload(): void;
}

/**
 * The live entries the Memory view shows: listed under the root and under each path the
 * user opens (so a large store is still browsable path by path), kept current by the stream.
 */
export const useEntries = (path: string): EntriesState => {
  const { api, live, session } = useApp();
  // A key confined to several prefixes cannot list the root: each prefix is listed instead.
  const roots = session.prefixes ?? [''];
  const [entries, setEntries] = useState<Map<string, Entry>>(new Map());
  const [truncated, setTruncated] = useState<Set<string>>(new Set());
  const [loading, setLoading] = useState(true);
  const [error, setError] = useState<ApiError | null>(null);

  const load = useCallback(
    async (prefix: string) => {
      setLoading(true);
      try {
        const found: Entry[] = [];
        let cursor: string | null = null;
        let pages = 0;
        do {
          const page: ListResponse = await api.get('/api/v1/entries', { entity_path: prefix || undefined, limit: 1000, cursor });
          found.push(...page.entries);
          cursor = page.next_cursor;
        } while (cursor && ++pages < MAX_PAGES);
        setEntries((old) => {
          const next = new Map([...old].filter(([, e]) => !isUnder(e.entity_path, prefix)));
          for (const e of found) next.set(addressOf(e), e);
          return next;
        });
        setTruncated((old) => {
          const next = new Set(old);
          if (cursor) next.add(prefix);
          else next.delete(prefix);
          return next;
        });
        setError(null);
      } catch (e) {
        setError(e instanceof ApiError ? e : new ApiError(0, 'ERROR', String(e)));
      } finally {
        setLoading(false);
      }
    },
    [api],
  );

  const loadRoots = useCallback(() => Promise.all(roots.map(load)), [load]);
  useEffect(() => void loadRoots(), [loadRoots]);
  // A path under a partial root listing gets its own full listing when opened.
  useEffect(() => {
    if (path && [...truncated].some((t) => isUnder(path, t))) void load(path);
  }, [path, truncated.size]);

  useEffect(() => {
    const offEntry = live.onEntry((entry) =>
      setEntries((old) => {
        const id = addressOf(entry);
        const current = old.get(id);
        if (current && current.version >= entry.version) return old;
        const next = new Map(old);
        if (entry.deleted) next.delete(id);
        else next.set(id, entry);
        return next;
      }),
    );
    // The stream keeps no backlog: whatever was written while it was down is listed again.
    const offReconnect = live.onReconnect(() => void loadRoots());
    return () => {
      offEntry();
      offReconnect();
    };
  }, [live, loadRoots]);

  return { entries, loading, error, truncated, reload: () => void (path ? load(path) : loadRoots()) };
};
