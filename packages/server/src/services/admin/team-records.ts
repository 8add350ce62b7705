import type { TeamRecord } from 'cairn-memory-client';
import { z } from 'zod';
import { labelSchema } from '../../domain/names.ts';

/** Teams live per namespace; a team's id is its name. */
export const teamsCollection = (namespace: string): string => `teams/${namespace}`;

/** A team as stored and as the admin API answers it: declared once, in the client. */
export type { TeamRecord };

export const TeamName = z.string().regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/, { error: 'expected letters, digits, ".", "_" or "-" (max 64)' });
export const Members = z.array(labelSchema(256, 'A member: a person or an agent id.')).max(1000);

/** A stored team as createTeam writes it, which the team readers take it to be (import checks it); typed as the client's TeamRecord, so the two cannot drift apart. */
export const TeamRecordSchema: z.ZodType<TeamRecord> = z.object({ name: TeamName, members: Members, created_at: z.iso.datetime() }).strict();
