import type { SearchFilter } from '../../ports/search-index.ts';

/**
 * The WHERE conditions of a search over cairn_search, with positional parameters from
 * `$first` on. Prefixes are segment-wise: `p` itself or anything in [`p/`, `p0`) under
 * COLLATE "C" ('0' is the byte after '/'), a range on the primary key with no LIKE escaping.
 */
export const filterSql = (filter: SearchFilter, first: number): { where: string; values: (string | number)[] } => {
  const values: (string | number)[] = [];
  const p = (value: string | number): string => `$${first + values.push(value) - 1}`;
  const where = [`namespace = ${p(filter.namespace)}`, `(expires_at is null or expires_at > ${p(new Date(filter.now).toISOString())}::timestamptz)`];
  if (filter.prefixes !== undefined) {
    const any = filter.prefixes.map((prefix) => {
      const x = p(prefix);
      return `(entity_path = ${x} or (entity_path >= ${x} || '/' and entity_path < ${x} || '0'))`;
    });
    where.push(any.length > 0 ? `(${any.join(' or ')})` : 'false');
  }
  if (filter.agentId !== undefined) where.push(`agent_id = ${p(filter.agentId)}`);
  if (filter.eventType !== undefined) where.push(`event_type = ${p(filter.eventType)}`);
  if (filter.minConfidence !== undefined) where.push(`confidence >= ${p(filter.minConfidence)}`);
  if (filter.since !== undefined) where.push(`written_at >= ${p(new Date(filter.since).toISOString())}::timestamptz`);
  return { where: where.join(' and '), values };
};
