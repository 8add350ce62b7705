import type { DigestType, PathType } from 'cairn-memory-client';
import type { Expect, SameUnion } from '../../domain/type-checks.ts';
import type { DigestTypeDef } from '../digest-types.ts';
import { COMMS } from './comms.ts';
import { GENERIC } from './generic.ts';
import { INCIDENTS } from './incidents.ts';
import { PROJECTS } from './projects.ts';
import { REPOS } from './repos.ts';

/**
 * Every type of path digest, once. A new type is a file in digests/ exporting its
 * DigestTypeDef and one line here; its name also goes into the client's `PathType` union (the
 * checks below, and the dashboard's type filter, do not compile until they agree). The order
 * here is the order of the API's type lists and of a roll-up's facts and headline; the order
 * of compiling is each type's `order`.
 */
export const DIGEST_TYPE_DEFS = [
  INCIDENTS,
  REPOS,
  COMMS,
  PROJECTS,
  GENERIC,
] as const satisfies readonly DigestTypeDef[];
type _EveryPathType = Expect<SameUnion<(typeof DIGEST_TYPE_DEFS)[number]['type'], PathType>>;

/** The path digest types, in registry order. */
export const PATH_TYPES = DIGEST_TYPE_DEFS.map((d) => d.type);

/** Every digest type: the path types, then the roll-ups. */
export const DIGEST_TYPE_NAMES = [...PATH_TYPES, 'source', 'namespace'] as const;
type _EveryDigestType = Expect<SameUnion<(typeof DIGEST_TYPE_NAMES)[number], DigestType>>;

const BY_TYPE: ReadonlyMap<string, DigestTypeDef> = new Map(DIGEST_TYPE_DEFS.map((d) => [d.type, d]));

/** A path's digest type: the connector shape its first segment names (SPEC §7), else generic. */
export const digestTypeOf = (entityPath: string): DigestTypeDef => BY_TYPE.get(entityPath.split('/', 1)[0] ?? '') ?? GENERIC;

/** The definition of a digest type; undefined for the roll-ups (`source`, `namespace`). */
export const definitionOf = (type: DigestType): DigestTypeDef | undefined => BY_TYPE.get(type);

/** Fact fields any type keeps as a per-item index (briefings leave them out). */
export const INDEX_FACTS: ReadonlySet<string> = new Set(DIGEST_TYPE_DEFS.flatMap((d) => d.indexFacts));
