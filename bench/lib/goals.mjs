// The goals of the benchmarks issue, each checked against the rows of one run.

const find = (rows, bench, kase, contender) =>
  rows.find(
    (r) =>
      r.bench === bench &&
      (kase === null || r.case === kase) &&
      r.contender === contender &&
      typeof r.median === 'number',
  );

const ratio = (a, b) => (a && b ? a.median / b.median : null);

/** The contender names of the Node floors (bench/addon/pollfloor.c). */
export const SPAWN_NODE_FLOOR = 'Node floor: posix_spawn + uv_poll -> await (addon)';
/** The spawn floor plus reading process.env in JavaScript, as every spawn that honours it must. */
export const SPAWN_NODE_FLOOR_ENV = 'Node floor + process.env read (addon)';
export const EXIT_NODE_FLOOR = 'Node floor: uv_poll -> await continuation';

const floorNote = (v, what) => (v === null ? undefined : `${what} ${v.toFixed(2)}`);

/** The check a target states: `'>= 2.5x'`, `'<= 1.3x'`, `'< 5'`, or a count (`'0'`) met exactly. */
function meets(target) {
  const m = /^(>=|<=|<) ([\d.]+)x?$/.exec(target);
  if (!m) return (v) => v === Number(target);
  const n = Number(m[2]);
  if (m[1] === '>=') return (v) => v >= n;
  return m[1] === '<=' ? (v) => v <= n : (v) => v < n;
}

function goal(name, target, value, detail) {
  if (value === null || value === undefined || Number.isNaN(value))
    return { goal: name, target, status: 'n/a', value: null, detail };
  return { goal: name, target, status: meets(target)(value) ? 'met' : 'missed', value, detail };
}

/** Evaluates every goal; `value` is the measured ratio or count. */
export function evaluateGoals(rows) {
  const g = [];
  const pp = (kase) => find(rows, 'spawn', kase, 'procpin.spawn');
  const cp = (kase) => find(rows, 'spawn', kase, 'child_process.spawn');
  const c = (kase) => find(rows, 'spawn', kase, 'C posix_spawn');
  g.push(
    goal('spawn: child_process / procpin, small parent', '>= 2.5x', ratio(cp('parent 0 MiB'), pp('parent 0 MiB'))),
  );
  g.push(
    goal('spawn: child_process / procpin, 1 GiB parent', '>= 8x', ratio(cp('parent 1024 MiB'), pp('parent 1024 MiB'))),
  );
  const worst = ['parent 0 MiB', 'parent 1024 MiB'].map((k) => ratio(pp(k), c(k))).filter((v) => v !== null);
  g.push(
    goal('spawn: procpin / C posix_spawn (worst of small, 1 GiB)', '<= 1.3x', worst.length ? Math.max(...worst) : null),
  );
  // The floor a Node process can reach at all: the bench-only addon's posix_spawn + uv_poll on the
  // pidfd + a promise it resolves (no JavaScript of procpin's, no ChildProcess object).
  const nodeFloor = (kase) => find(rows, 'spawn', kase, SPAWN_NODE_FLOOR);
  g.push(
    goal(
      'spawn: procpin / C posix_spawn, small parent',
      '<= 1.15x',
      ratio(pp('parent 0 MiB'), c('parent 0 MiB')),
      [
        floorNote(ratio(nodeFloor('parent 0 MiB'), c('parent 0 MiB')), 'Node floor (addon) / C'),
        floorNote(
          ratio(find(rows, 'spawn', 'parent 0 MiB', SPAWN_NODE_FLOOR_ENV), c('parent 0 MiB')),
          'with process.env read',
        ),
      ]
        .filter(Boolean)
        .join('; ') || undefined,
    ),
  );
  const dropIn = (kase) => find(rows, 'spawn', kase, 'procpin/child_process.spawn');
  for (const [kase, label] of [
    ['parent 0 MiB', 'small parent'],
    ['parent 1024 MiB', '1 GiB parent'],
  ]) {
    g.push(
      goal(
        `spawn: procpin/child_process vs child_process.spawn, ${label} (child_process / drop-in)`,
        '>= 1x',
        ratio(cp(kase), dropIn(kase)),
      ),
    );
  }

  const eCp = find(rows, 'exit', null, "child_process 'exit'");
  const ePp = find(rows, 'exit', null, 'procpin Child.exited');
  const eC = find(rows, 'exit', null, 'C poll(pidfd)');
  const eNode = find(rows, 'exit', null, EXIT_NODE_FLOOR);
  const eNodeNote = floorNote(ratio(eNode, eC), 'Node floor (uv_poll -> await) / C');
  g.push(goal('exit noticed: child_process / procpin', '>= 1.3x', ratio(eCp, ePp), eNodeNote));
  g.push(goal('exit noticed: procpin / C poll(pidfd)', '<= 1.3x', ratio(ePp, eC), eNodeNote));
  const p99 = ePp && eC ? ePp.p99 / eC.p99 : null;
  const p99Note = eNode && eC ? `Node floor p99 / C p99 ${(eNode.p99 / eC.p99).toFixed(2)}` : undefined;
  g.push(goal('exit noticed p99: procpin / C poll(pidfd)', '<= 1.5x', p99, p99Note));

  const big = '500 members';
  const gPp = find(rows, 'group', big, 'procpin stop()');
  const gRaw = find(rows, 'group', big, 'raw kill(-pgid, SIGKILL)');
  const gTree = find(rows, 'group', big, 'tree-kill');
  g.push(goal('group of 500: procpin / raw kill(-pgid)', '<= 1.3x', ratio(gPp, gRaw)));
  g.push(goal('group of 500: tree-kill / procpin', '>= 40x', ratio(gTree, gPp)));
  const ppGroups = rows.filter(
    (r) => r.bench === 'group' && r.contender === 'procpin stop()' && typeof r.median === 'number',
  );
  g.push(
    goal(
      'group: procpin survivors (both shapes)',
      '0',
      ppGroups.length ? Math.max(...ppGroups.map((r) => r.survivors)) : null,
    ),
  );

  const sw = rows.filter((r) => r.bench === 'sweep' && typeof r.median === 'number');
  const swPp = sw.find((r) => /procpin/i.test(r.contender));
  const swC = sw.find((r) => /^C\b/.test(r.contender));
  let swRatio = null;
  if (swPp && swC) swRatio = /\/s/.test(swPp.unit ?? '') ? swC.median / swPp.median : swPp.median / swC.median;
  g.push(goal('sweep: procpin slower than C by at most', '<= 2x', swRatio));
  g.push(goal('sweep 10k: procpin / C loop (same checks)', '<= 1.3x', swRatio));

  const plain = find(rows, 'contain', null, 'spawnGroup');
  const pidns = find(rows, 'contain', null, 'spawnGroup pidns');
  g.push(goal('contain: spawnGroup pidns / plain spawnGroup', '<= 1.5x', ratio(pidns, plain)));

  const k = find(rows, 'overhead', null, 'process.kill(pid, 0)');
  g.push(
    goal(
      'pidfdSendSignal(fd, 0) / process.kill(pid, 0)',
      '<= 1.2x',
      ratio(find(rows, 'overhead', null, 'pidfdSendSignal(fd, 0)'), k),
    ),
  );
  g.push(
    goal(
      'tryLock / process.kill(pid, 0)',
      '<= 1.2x',
      ratio(find(rows, 'overhead', null, "tryLock(fd, 'exclusive')"), k),
    ),
  );

  const soak = find(rows, 'soak', null, 'procpin.spawn');
  g.push(goal('soak: procpin fd growth', '0', soak ? soak.fdGrowth : null));
  g.push(goal('soak: procpin RSS growth (MB)', '< 5', soak ? soak.rssGrowthMB : null));
  return g;
}
