// What the group tests against real processes share: a spawnGroup that kills whatever a failing
// test left running, the diagnostics phases of one group, a scratch directory.
import { after } from 'node:test';
import * as dc from 'node:diagnostics_channel';
import { readFileSync } from 'node:fs';
import { spawnGroup as realSpawnGroup } from '../../dist/index.js';
import { liveMembers, procState, tmpDirFor } from '../helpers.mjs';

export const STRESS = process.env.PROCPIN_STRESS === '1';
export const expectPidfd = process.env.PROCPIN_EXPECT_GROUP_PATH;

// Every group this file starts; a failing test must not leave its members running.
export const started = [];
/**
 * spawnGroup, with the group remembered so that a failing test leaves no member running.
 * @param {...any} args spawnGroup's
 * @returns {import('procpin').ProcessGroup}
 */
export function spawnGroup(...args) {
  const g = realSpawnGroup(.../** @type {[string]} */ (args));
  started.push(g.pgid);
  return g;
}
after(() => {
  for (const pgid of started)
    for (const m of liveMembers(pgid))
      try {
        process.kill(m.pid, 'SIGKILL');
      } catch {}
});

/** Reads whitespace-separated pids from a file the group wrote. */
export function pidsIn(file) {
  return readFileSync(file, 'utf8').split(/\s+/).filter(Boolean).map(Number);
}

/** Collects the diagnostics phases of one group. */
// The procpin:group messages for pidRef.pid (every message while it is undefined), each with the
// leader's /proc state when it was published. With a test context `t`, the watch ends after it.
export function phasesOf(pidRef, t) {
  /** @type {any[] & { stop?: () => void }} */
  const seen = [];
  const onMessage = (m) => {
    if (pidRef.pid === undefined || m.pid === pidRef.pid) seen.push({ ...m, leaderState: procState(m.pid) });
  };
  dc.subscribe('procpin:group', onMessage);
  seen.stop = () => dc.unsubscribe('procpin:group', onMessage);
  t?.after(() => seen.stop());
  return seen;
}

export function workdir(t) {
  const d = tmpDirFor(t, 'procpin-group-');
  return d.path;
}
