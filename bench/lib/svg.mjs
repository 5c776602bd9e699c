// The spawn-cost-against-parent-memory chart, written as plain SVG (no chart library).

const COLORS = {
  'child_process.spawn': '#d62728',
  'child_process.spawnSync': '#ff9896',
  'procpin.spawn': '#1f77b4',
  'C posix_spawn': '#2ca02c',
  'C clone(VM|VFORK|PIDFD)': '#98df8a',
};

const esc = (s) => String(s).replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

function niceMax(v) {
  const p = 10 ** Math.floor(Math.log10(v));
  for (const m of [1, 2, 2.5, 5, 10]) if (m * p >= v) return m * p;
  return 10 * p;
}

const sizeLabel = (mib) => (mib >= 1024 ? `${mib / 1024} GiB` : mib === 0 ? '~0 (small)' : `${mib} MiB`);

/**
 * `rows`: the spawn benchmark's rows (`mib`, `contender`, `median`, `p95`). Returns SVG text:
 * median spawn+exit+reap time per contender against the parent's memory, p95 as whiskers.
 */
export function spawnChart(rows, { machine = '' } = {}) {
  const data = rows.filter((r) => typeof r.median === 'number');
  const sizes = [...new Set(data.map((r) => r.mib))].sort((a, b) => a - b);
  const names = Object.keys(COLORS).filter((n) => data.some((r) => r.contender === n));
  const W = 760;
  const H = 440;
  const m = { l: 64, r: 210, t: 48, b: 64 };
  const pw = W - m.l - m.r;
  const ph = H - m.t - m.b;
  const ymax = niceMax(Math.max(...data.filter((r) => names.includes(r.contender)).map((r) => r.median)) * 1.08);
  const x = (i) => m.l + (sizes.length === 1 ? pw / 2 : (i * pw) / (sizes.length - 1));
  const y = (v) => m.t + ph - (Math.min(v, ymax) / ymax) * ph;
  const out = [];
  out.push(`<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" font-family="Helvetica, Arial, sans-serif" font-size="12">`);
  out.push(`<rect width="${W}" height="${H}" fill="#fff"/>`);
  out.push(`<text x="${m.l}" y="22" font-size="15" font-weight="bold">spawn + exit + reap of /bin/true against the parent's memory</text>`);
  out.push(`<text x="${m.l}" y="38" fill="#555">median per spawn (whiskers: p95), contenders interleaved in one run${machine ? ` · ${esc(machine)}` : ''}</text>`);
  for (let k = 0; k <= 5; k++) {
    const v = (ymax * k) / 5;
    out.push(`<line x1="${m.l}" x2="${m.l + pw}" y1="${y(v)}" y2="${y(v)}" stroke="#e5e5e5"/>`);
    out.push(`<text x="${m.l - 8}" y="${y(v) + 4}" text-anchor="end" fill="#333">${+v.toFixed(1)}</text>`);
  }
  out.push(`<text transform="translate(18 ${m.t + ph / 2}) rotate(-90)" text-anchor="middle" fill="#333">ms per spawn (lower is better)</text>`);
  sizes.forEach((s, i) => {
    out.push(`<text x="${x(i)}" y="${m.t + ph + 20}" text-anchor="middle" fill="#333">${sizeLabel(s)}</text>`);
  });
  out.push(`<text x="${m.l + pw / 2}" y="${H - 18}" text-anchor="middle" fill="#333">memory the parent holds (touched)</text>`);
  out.push(`<line x1="${m.l}" x2="${m.l}" y1="${m.t}" y2="${m.t + ph}" stroke="#333"/>`);
  out.push(`<line x1="${m.l}" x2="${m.l + pw}" y1="${m.t + ph}" y2="${m.t + ph}" stroke="#333"/>`);
  names.forEach((name, k) => {
    const pts = sizes
      .map((s, i) => [i, data.find((r) => r.contender === name && r.mib === s)])
      .filter(([, r]) => r);
    const c = COLORS[name];
    out.push(`<polyline fill="none" stroke="${c}" stroke-width="2.5" points="${pts.map(([i, r]) => `${x(i)},${y(r.median)}`).join(' ')}"/>`);
    for (const [i, r] of pts) {
      out.push(`<line x1="${x(i)}" x2="${x(i)}" y1="${y(r.median)}" y2="${y(r.p95)}" stroke="${c}" stroke-width="1"/>`);
      out.push(`<circle cx="${x(i)}" cy="${y(r.median)}" r="4" fill="${c}"><title>${esc(name)} at ${sizeLabel(r.mib)}: median ${r.median.toFixed(2)} ms, p95 ${r.p95.toFixed(2)} ms (n=${r.n})</title></circle>`);
    }
    const last = pts[pts.length - 1];
    if (last) {
      out.push(`<text x="${x(last[0]) + 8}" y="${y(last[1].median) + 4}" fill="${c}" font-size="11">${last[1].median.toFixed(1)}</text>`);
    }
    const ly = m.t + 10 + k * 22;
    out.push(`<line x1="${m.l + pw + 40}" x2="${m.l + pw + 62}" y1="${ly}" y2="${ly}" stroke="${c}" stroke-width="3"/>`);
    out.push(`<text x="${m.l + pw + 68}" y="${ly + 4}" fill="#222">${esc(name)}</text>`);
  });
  out.push('</svg>');
  return out.join('\n') + '\n';
}
