// The recorder the cleanup's decisions are tested with (group-logic*.test.mjs): a fake leader
// and kernel that log every group signal with the leader's state at that moment.
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const { GroupCleanup } = require('../../dist/group/logic.js');

export const SIGTERM = 15;
export const SIGKILL = 9;
export const SIGCONT = 18;
export const SIGUSR1 = 10;

export const exitInfo = (exitCode = 0) => ({
  pid: 4242,
  uid: 0,
  code: 'CLD_EXITED',
  status: exitCode,
  exitCode,
  signal: null,
});
export const killedInfo = (signal = 'SIGKILL', status = SIGKILL) => ({
  pid: 4242,
  uid: 0,
  code: 'CLD_KILLED',
  status,
  exitCode: null,
  signal,
});

/**
 * A fake leader and kernel. `leader` is 'running' | 'exited' (a zombie) | 'reaped'. The leader's
 * watch (`exited` promise) is resolved by `watchFires()`, separately from the state a WNOWAIT look
 * sees, so tests can make the watch lag behind the kernel.
 */
export function harness(opts = {}) {
  const {
    grace = 1000,
    timeout,
    killSignal = SIGTERM,
    scan = () => 0,
    send = () => 'ok',
    onSignal = () => {},
    abortedAtStart = false,
    lookThrows = false,
    // An error (or a function making one) the reap throws instead of reaping: the injected op.
    reapError = null,
    onTimer = () => {},
  } = opts;
  const log = [];
  const phases = [];
  const h = {
    leader: 'running',
    info: null,
    log,
    phases,
    abortListeners: [],
    groupSignals: () => log.filter((e) => e[0] === 'group'),
    exitNow(info = exitInfo()) {
      h.leader = 'exited';
      h.info = info;
    },
    watchFires() {
      resolveWatch(h.info);
    },
    exitAndWatch(info) {
      h.exitNow(info);
      h.watchFires();
    },
    abort() {
      for (const fn of h.abortListeners) fn();
    },
  };
  let resolveWatch;
  const watch = new Promise((r) => (resolveWatch = r));
  const ops = {
    signalGroup(sig) {
      assert.notEqual(h.leader, 'reaped', 'a group signal after the reap');
      log.push(['group', sig, h.leader]);
      const r = send(sig, h);
      onSignal(sig, h);
      return r;
    },
    signalLeader(sig) {
      log.push(['leader', sig, h.leader]);
      return h.leader === 'running';
    },
    scanMembers() {
      log.push(['scan', h.leader]);
      return scan(h);
    },
    lookLeader() {
      if (lookThrows) throw Object.assign(new Error('ECHILD'), { code: 'ECHILD' });
      return h.leader === 'running' ? null : h.info;
    },
    reapLeader() {
      if (reapError) {
        log.push(['reap-failed']);
        throw typeof reapError === 'function' ? reapError(h) : reapError;
      }
      assert.equal(h.leader, 'exited', 'reaped a leader that had not exited');
      log.push(['reap']);
      h.leader = 'reaped';
      return h.info;
    },
    closeLeader() {
      log.push(['close', h.leader]);
    },
    now: () => performance.now(),
    setTimer(fn, ms) {
      onTimer(ms);
      // Always ref'd here: no fake leader watch keeps the loop alive.
      const t = setTimeout(fn, ms);
      return () => clearTimeout(t);
    },
    publish(p) {
      phases.push(p);
    },
    onAbort(fn) {
      h.abortListeners.push(fn);
      return () => (h.abortListeners = h.abortListeners.filter((f) => f !== fn));
    },
  };
  h.group = new GroupCleanup(
    ops,
    {
      pid: 4242,
      killSignal,
      killSignalName: killSignal === SIGKILL ? 'SIGKILL' : 'SIGTERM',
      grace,
      timeout,
      abortedAtStart,
    },
    watch,
  );
  return h;
}

export const last = (a) => a[a.length - 1];
