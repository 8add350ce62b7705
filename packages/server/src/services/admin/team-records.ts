/** Teams live per namespace; a team's id is its name. */
export const teamsCollection = (namespace: string): string => `teams/${namespace}`;

/** A team as stored and as the admin API answers it: declared once, in the client. */
export type { TeamRecord } from 'cairn-memory-client';
