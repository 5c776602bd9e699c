// The spawn-cost-against-parent-memory chart, written as plain SVG (no chart library).

// Drawing order: floors first, procpin last (on top): name, colour, line width, dash pattern.
/** @type {[name: string, color: string, width: number, dash: string][]} */
const SERIES = [
  ['C clone(VM|VFORK|PIDFD)', '#98df8a', 2, '4 3'],
  ['C posix_spawn', '#2ca02c', 2, ''],
  ['child_process.spawnSync', '#ff9896', 2, '4 3'],
  ['child_process.spawn', '#d62728', 3, ''],
  ['procpin.spawn', '#1f77b4', 3.5, ''],
];
// Values printed next to the points.
const LABELLED = new Set(['child_process.spawn', 'procpin.spawn']);

const esc = (s) => String(s).replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
const sizeLabel = (mib) => (mib >= 1024 ? `${mib / 1024} GiB` : mib === 0 ? 'small (~50 MB)' : `${mib} MiB`);
const num = (v) => (v >= 10 ? v.toFixed(0) : v.toFixed(1));

/**
 * `rows`: the spawn benchmark's rows (`mib`, `contender`, `median`, `p95`, `n`). Returns SVG
 * text: the median spawn+exit+reap time of each contender against the parent's memory, on a
 * logarithmic axis so that the flat lines stay readable next to the one that climbs.
 */
export function spawnChart(rows, { machine = '' } = {}) {
  const data = rows.filter((r) => typeof r.median === 'number');
  const sizes = [...new Set(data.map((r) => r.mib))].sort((a, b) => a - b);
  const series = SERIES.filter(([n]) => data.some((r) => r.contender === n));
  const W = 880;
  const H = 460;
  const m = { l: 70, r: 250, t: 60, b: 64 };
  const pw = W - m.l - m.r;
  const ph = H - m.t - m.b;
  const vals = data.filter((r) => series.some(([n]) => n === r.contender)).map((r) => r.median);
  const lo = 10 ** Math.floor(Math.log10(Math.min(...vals)));
  const hi = 10 ** Math.ceil(Math.log10(Math.max(...vals)));
  const x = (i) => m.l + 20 + (sizes.length === 1 ? (pw - 40) / 2 : (i * (pw - 40)) / (sizes.length - 1));
  const y = (v) => m.t + ph - ((Math.log10(v) - Math.log10(lo)) / (Math.log10(hi) - Math.log10(lo))) * ph;
  const out = [];
  out.push(
    `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" font-family="Helvetica, Arial, sans-serif" font-size="12">`,
  );
  out.push(`<rect width="${W}" height="${H}" fill="#fff"/>`);
  out.push(
    `<text x="${m.l}" y="24" font-size="16" font-weight="bold">Spawn cost against the memory the parent holds</text>`,
  );
  out.push(
    `<text x="${m.l}" y="42" fill="#555">spawn + exit + reap of /bin/true, median ms (log scale), contenders interleaved in one run${machine ? `; ${esc(machine)}` : ''}</text>`,
  );
  for (let d = lo; d <= hi * 1.0001; d *= 10) {
    for (const k of [1, 2, 5]) {
      const v = d * k;
      if (v > hi * 1.0001) break;
      out.push(
        `<line x1="${m.l}" x2="${m.l + pw}" y1="${y(v)}" y2="${y(v)}" stroke="${k === 1 ? '#d0d0d0' : '#eeeeee'}"/>`,
      );
      out.push(`<text x="${m.l - 8}" y="${y(v) + 4}" text-anchor="end" fill="#333">${+v.toPrecision(3)}</text>`);
    }
  }
  out.push(
    `<text transform="translate(20 ${m.t + ph / 2}) rotate(-90)" text-anchor="middle" fill="#333">ms per spawn (lower is better)</text>`,
  );
  sizes.forEach((s, i) => {
    out.push(`<text x="${x(i)}" y="${m.t + ph + 20}" text-anchor="middle" fill="#333">${sizeLabel(s)}</text>`);
  });
  out.push(
    `<text x="${m.l + pw / 2}" y="${H - 16}" text-anchor="middle" fill="#333">memory held by the parent Node process (every page touched)</text>`,
  );
  out.push(`<line x1="${m.l}" x2="${m.l}" y1="${m.t}" y2="${m.t + ph}" stroke="#333"/>`);
  out.push(`<line x1="${m.l}" x2="${m.l + pw}" y1="${m.t + ph}" y2="${m.t + ph}" stroke="#333"/>`);
  for (const [name, color, width, dash] of series) {
    const pts = sizes.map((s, i) => [i, data.find((r) => r.contender === name && r.mib === s)]).filter(([, r]) => r);
    const d = pts.map(([i, r]) => `${x(i).toFixed(1)},${y(r.median).toFixed(1)}`).join(' ');
    out.push(
      `<polyline fill="none" stroke="${color}" stroke-width="${width}"${dash ? ` stroke-dasharray="${dash}"` : ''} points="${d}"/>`,
    );
    for (const [i, r] of pts) {
      const tip = `${esc(name)} at ${sizeLabel(r.mib)}: median ${r.median.toFixed(2)} ms, p95 ${r.p95.toFixed(2)} ms (n=${r.n})`;
      out.push(
        `<circle cx="${x(i).toFixed(1)}" cy="${y(r.median).toFixed(1)}" r="4" fill="${color}"><title>${tip}</title></circle>`,
      );
      if (LABELLED.has(name)) {
        const below = name === 'procpin.spawn';
        out.push(
          `<text x="${x(i).toFixed(1)}" y="${(y(r.median) + (below ? 22 : -10)).toFixed(1)}" text-anchor="middle" fill="${color}" font-weight="bold" stroke="#fff" stroke-width="4" paint-order="stroke">${num(r.median)}</text>`,
        );
      }
    }
  }
  [...series].reverse().forEach(([name, color, width, dash], k) => {
    const ly = m.t + 12 + k * 24;
    const lx = m.l + pw + 30;
    out.push(
      `<line x1="${lx}" x2="${lx + 28}" y1="${ly}" y2="${ly}" stroke="${color}" stroke-width="${width}"${dash ? ` stroke-dasharray="${dash}"` : ''}/>`,
    );
    out.push(`<text x="${lx + 36}" y="${ly + 4}" fill="#222">${esc(name)}</text>`);
  });
  out.push('</svg>');
  return out.join('\n') + '\n';
}
