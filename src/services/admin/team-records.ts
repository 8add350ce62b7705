/** Teams live per namespace; a team's id is its name. */
export const teamsCollection = (namespace: string): string => `teams/${namespace}`;

export interface TeamRecord {
  name: string;
  /** Agent ids or people (free-form identities). */
  members: string[];
  created_at: string;
}
