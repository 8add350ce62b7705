import { useEffect, useState } from 'preact/hooks';

const UNITS: Array<[Intl.RelativeTimeFormatUnit, number]> = [
  ['day', 86_400_000],
  ['hour', 3_600_000],
  ['minute', 60_000],
  ['second', 1000],
];
const format = new Intl.RelativeTimeFormat(undefined, { numeric: 'auto' });

/** "3 minutes ago"; a text that is no date (stored data can hold anything) is returned as it is. */
export const relative = (iso: string, now = Date.now()): string => {
  const diff = Date.parse(iso) - now;
  if (!Number.isFinite(diff)) return iso;
  if (Math.abs(diff) < 5000) return 'just now';
  for (const [unit, ms] of UNITS) if (Math.abs(diff) >= ms || unit === 'second') return format.format(Math.round(diff / ms), unit);
  return iso;
};

/** "3 minutes ago", exact time on hover (a time that is not a date shows as its text); re-rendered every 15 s so it does not go stale. */
export const Time = ({ iso, fallback = '—' }: { iso: string | null | undefined; fallback?: string }) => {
  const [, tick] = useState(0);
  useEffect(() => {
    const timer = setInterval(() => tick((n) => n + 1), 15_000);
    return () => clearInterval(timer);
  }, []);
  if (!iso) return <span class="muted">{fallback}</span>;
  // Not a date: shown as written. Formatting it would throw (RangeError) and take the page down.
  if (!Number.isFinite(Date.parse(iso))) return <time title="not a date">{String(iso)}</time>;
  return (
    <time dateTime={iso} title={new Date(iso).toLocaleString()}>
      {relative(iso)}
    </time>
  );
};
