import { useCallback, useEffect, useState } from 'preact/hooks';
import { ApiError } from '../api/client.ts';
import type { Entry, ListResponse } from 'cairn-memory-client';
import { useApp } from '../context.ts';
import { addressOf, isUnder } from './address.ts';

/**
 * One view lists pages of PAGE entries, up to MAX_ENTRIES entries or MAX_CHARS characters of
 * their JSON, whichever comes first; past either the view says it is partial, and a path opened
 * is listed on its own. Pages of 1,000 large entries were hundreds of megabytes each (the
 * server now ends a page at 16 MiB, services/page-budget.ts), five of them per view.
 */
const PAGE = 250;
const MAX_ENTRIES = 5000;
const MAX_CHARS = 32 * 1024 * 1024;

/** An entry's size as JSON, roughly: its value and provenance, which are most of it. */
const sizeOf = (entry: Entry): number => {
  const { value } = entry;
  return 512 + (typeof value === 'string' ? value.length : JSON.stringify(value ?? null).length) + JSON.stringify(entry.provenance ?? {}).length;
};

export interface EntriesState {
  entries: Map<string, Entry>;
  loading: boolean;
  error: ApiError | null;
  /** Prefixes whose listing stopped at MAX_ENTRIES or MAX_CHARS. */
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
        let chars = 0;
        do {
          const page: ListResponse = await api.get('/api/v1/entries', { entity_path: prefix || undefined, limit: Math.min(PAGE, MAX_ENTRIES - found.length), cursor });
          found.push(...page.entries);
          for (const e of page.entries) chars += sizeOf(e);
          cursor = page.next_cursor;
        } while (cursor && found.length < MAX_ENTRIES && chars < MAX_CHARS);
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
    // Writes arrive one event each, up to hundreds a second: applied once per animation frame,
    // so the map of every listed entry (thousands) is copied, and the view redrawn, once per
    // frame rather than once per write. Pending writes are kept by address, newest version.
    let pending = new Map<string, Entry>();
    let frame: number | null = null;
    const flush = () => {
      frame = null;
      const arrived = pending;
      pending = new Map();
      setEntries((old) => {
        let next: Map<string, Entry> | null = null;
        for (const [id, entry] of arrived) {
          const current = old.get(id);
          if (current && current.version >= entry.version) continue;
          next ??= new Map(old);
          if (entry.deleted) next.delete(id);
          else next.set(id, entry);
        }
        return next ?? old;
      });
    };
    const offEntry = live.onEntry((entry) => {
      const id = addressOf(entry);
      const waiting = pending.get(id);
      if (!waiting || waiting.version < entry.version) pending.set(id, entry);
      frame ??= requestAnimationFrame(flush);
    });
    // The stream keeps no backlog: whatever was written while it was down is listed again.
    const offReconnect = live.onReconnect(() => void loadRoots());
    return () => {
      offEntry();
      offReconnect();
      if (frame !== null) cancelAnimationFrame(frame);
    };
  }, [live, loadRoots]);

  return { entries, loading, error, truncated, reload: () => void (path ? load(path) : loadRoots()) };
};
