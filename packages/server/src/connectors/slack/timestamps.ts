/**
 * Slack message timestamps ("1355517523.000005") are both a message's id within its channel
 * and its time. The integer part is bounded to 10 digits so that every accepted value is a
 * real date (a longer one would make toISOString throw).
 */
export const SLACK_TS = /^\d{1,10}(\.\d{1,9})?$/;

const parts = (ts: string): [number, string] => {
  const [whole = '0', fraction = ''] = ts.split('.');
  return [Number(whole), fraction.padEnd(9, '0')];
};

/** Order two Slack timestamps as times; string order would put "9.1" after "10.1". */
export const compareTs = (a: string, b: string): number => {
  const [aWhole, aFraction] = parts(a);
  const [bWhole, bFraction] = parts(b);
  if (aWhole !== bWhole) return aWhole < bWhole ? -1 : 1;
  return aFraction < bFraction ? -1 : aFraction > bFraction ? 1 : 0;
};

/** The instant a Slack timestamp names, to the millisecond, as ISO 8601. */
export const tsToIso = (ts: string): string => {
  const [whole, fraction] = parts(ts);
  return new Date(whole * 1000 + Number(fraction.slice(0, 3))).toISOString();
};
