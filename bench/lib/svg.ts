/**
 * Small inline-SVG charts for the HTML report: no scripts, no fonts to fetch, so the report
 * opens offline and can be committed as one file.
 */
const esc = (s: string): string => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
const fmt = (n: number): string => (Math.abs(n) >= 1000 ? `${Math.round(n / 100) / 10}k` : `${Math.round(n * 10) / 10}`);
const COLORS = ['#2563eb', '#9ca3af', '#dc2626', '#16a34a', '#d97706', '#7c3aed'];

export interface BarGroup {
  label: string;
  /** One bar per series, in the order of `series`. */
  values: number[];
  /** Printed under the group (a ratio, say). */
  note?: string;
}

/** Grouped horizontal bars: e.g. Cairn against its ceiling, per operation. */
export const barChart = (title: string, series: string[], groups: BarGroup[], unit: string): string => {
  const rowH = 18;
  const groupH = series.length * rowH + 22;
  const left = 170;
  const width = 720;
  const plotW = width - left - 90;
  const height = 40 + groups.length * groupH + 24;
  const max = Math.max(1, ...groups.flatMap((g) => g.values));
  const parts: string[] = [`<text x="0" y="16" class="t">${esc(title)}</text>`];
  groups.forEach((g, gi) => {
    const y0 = 34 + gi * groupH;
    parts.push(`<text x="0" y="${y0 + 13}" class="l">${esc(g.label)}</text>`);
    if (g.note) parts.push(`<text x="0" y="${y0 + 28}" class="n">${esc(g.note)}</text>`);
    g.values.forEach((v, si) => {
      const w = Math.max(1, (v / max) * plotW);
      const y = y0 + si * rowH;
      parts.push(`<rect x="${left}" y="${y}" width="${w.toFixed(1)}" height="${rowH - 4}" fill="${COLORS[si % COLORS.length]}"/>`);
      parts.push(`<text x="${left + w + 4}" y="${y + 11}" class="v">${fmt(v)} ${esc(unit)}</text>`);
    });
  });
  const legendY = height - 8;
  series.forEach((s, si) => {
    parts.push(`<rect x="${left + si * 170}" y="${legendY - 9}" width="10" height="10" fill="${COLORS[si % COLORS.length]}"/>`);
    parts.push(`<text x="${left + si * 170 + 14}" y="${legendY}" class="v">${esc(s)}</text>`);
  });
  return `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 ${width} ${height}" width="${width}" height="${height}">${parts.join('')}</svg>`;
};

export interface Line {
  name: string;
  points: Array<[number, number]>;
}

/** Lines over a shared x axis; `logX` for corpus sizes spanning decades. */
export const lineChart = (title: string, lines: Line[], xLabel: string, yLabel: string, logX = false): string => {
  const width = 720;
  const height = 300;
  const m = { l: 60, r: 160, t: 30, b: 40 };
  const xs = lines.flatMap((l) => l.points.map((p) => p[0]));
  const ys = lines.flatMap((l) => l.points.map((p) => p[1]));
  if (xs.length === 0) return '';
  const tx = (x: number) => (logX ? Math.log10(Math.max(x, 1)) : x);
  const x0 = Math.min(...xs.map(tx));
  const x1 = Math.max(...xs.map(tx));
  const y1 = Math.max(...ys) * 1.1 || 1;
  const px = (x: number) => m.l + ((tx(x) - x0) / (x1 - x0 || 1)) * (width - m.l - m.r);
  const py = (y: number) => height - m.b - (y / y1) * (height - m.t - m.b);
  const parts: string[] = [`<text x="0" y="16" class="t">${esc(title)}</text>`];
  parts.push(`<line x1="${m.l}" y1="${height - m.b}" x2="${width - m.r}" y2="${height - m.b}" class="ax"/><line x1="${m.l}" y1="${m.t}" x2="${m.l}" y2="${height - m.b}" class="ax"/>`);
  for (let i = 0; i <= 4; i++) {
    const y = (y1 / 4) * i;
    parts.push(`<text x="${m.l - 6}" y="${py(y) + 4}" class="v" text-anchor="end">${fmt(y)}</text><line x1="${m.l}" y1="${py(y)}" x2="${width - m.r}" y2="${py(y)}" class="g"/>`);
  }
  for (const x of [...new Set(xs)].sort((a, b) => a - b)) parts.push(`<text x="${px(x)}" y="${height - m.b + 16}" class="v" text-anchor="middle">${fmt(x)}</text>`);
  parts.push(`<text x="${(m.l + width - m.r) / 2}" y="${height - 4}" class="v" text-anchor="middle">${esc(xLabel)}</text>`);
  parts.push(`<text x="12" y="${(m.t + height - m.b) / 2}" class="v" transform="rotate(-90 12 ${(m.t + height - m.b) / 2})" text-anchor="middle">${esc(yLabel)}</text>`);
  lines.forEach((l, i) => {
    const c = COLORS[i % COLORS.length];
    const pts = l.points.map(([x, y]) => `${px(x).toFixed(1)},${py(y).toFixed(1)}`).join(' ');
    parts.push(`<polyline points="${pts}" fill="none" stroke="${c}" stroke-width="2"/>`);
    for (const [x, y] of l.points) parts.push(`<circle cx="${px(x).toFixed(1)}" cy="${py(y).toFixed(1)}" r="3" fill="${c}"/>`);
    parts.push(`<rect x="${width - m.r + 12}" y="${m.t + i * 18}" width="10" height="10" fill="${c}"/><text x="${width - m.r + 26}" y="${m.t + i * 18 + 9}" class="v">${esc(l.name)}</text>`);
  });
  return `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 ${width} ${height}" width="${width}" height="${height}">${parts.join('')}</svg>`;
};

export const CHART_CSS = `svg{display:block;margin:1em 0;max-width:100%;height:auto;font-family:system-ui,sans-serif}
svg .t{font-size:14px;font-weight:600}svg .l{font-size:12px}svg .n{font-size:11px;fill:#555}svg .v{font-size:11px;fill:#333}
svg .ax{stroke:#333}svg .g{stroke:#e5e7eb}`;
