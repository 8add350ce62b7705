/**
 * Compile-time checks that cost nothing at run time. The server keeps some value lists that
 * must match a union the client declares (SCOPES and `Scope`, DIGEST_TYPES and
 * `DigestTypeFilter`); `type _ = Expect<SameUnion<(typeof LIST)[number], Union>>` beside the
 * list makes a member added to one and not the other a type error ("Type 'false' does not
 * satisfy the constraint 'true'").
 */
export type SameUnion<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
export type Expect<T extends true> = T;
