import { pathSegment } from '../parse-json.ts';

/**
 * `comms/slack/<channel>` for any channel id a payload carries. pathSegment trims before it
 * cuts to 128 characters, so a long hostile id can still end in whitespace or half of a
 * surrogate pair — both refused by the entity path rules; this finishes the job.
 */
export const channelPath = (channel: string): string => {
  const segment = pathSegment(channel.toWellFormed()).toWellFormed().trimEnd();
  return `comms/slack/${segment === '' || segment === '.' || segment === '..' ? 'unknown' : segment}`;
};
