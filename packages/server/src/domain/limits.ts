/** Size and shape limits of SPEC §3 and §4, in one place so docs and checks agree. */
export const LIMITS = {
  bodyBytes: 1024 * 1024,
  valueBytes: 512 * 1024,
  /** Where an entry came from is a few fields (a connector, a delivery id, a URL), not a second value. */
  provenanceBytes: 64 * 1024,
  entityPathChars: 512,
  entityPathSegments: 32,
  segmentChars: 128,
  keyChars: 256,
  tags: 64,
  tagChars: 128,
  agentIdChars: 256,
  eventTypeChars: 128,
  listLimitMax: 1000,
  listLimitDefault: 100,
  historyLimitMax: 1000,
  /**
   * The most characters of entries' JSON a page answers (list, history, search, neighbours):
   * a page of `limit` entries near the value limit would be hundreds of megabytes (1,000 of
   * them: past the longest string V8 can build, a 500). A page that reaches it ends early,
   * with its cursor; one entry is always answered (an entry's JSON is at most a few MiB).
   */
  pageJsonChars: 16 * 1024 * 1024,
  namespaceChars: 128,
} as const;
