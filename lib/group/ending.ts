/**
 * However the supervisor ends, its groups die: the groups not yet released are killed on the
 * process's 'exit' and on an ending signal the application does not listen for; the native
 * end-kill table (native/endkill) covers every other way of ending.
 * @internal
 * @module
 */
import { constants as osConstants } from 'node:os';
import { isMainThread } from 'node:worker_threads';
import { binding } from '../binding';
import { endContainments } from '../contain/contain';
import { restoreTerminals } from './foreground';
import type { GroupCleanup } from './logic';

// Groups not yet released: on the 'exit' event each gets its group SIGKILL from the cleanup's
// own logic; the native end-kill table (armed by the spawn) covers every other way of ending.
const live = new Set<GroupCleanup>();

/** The group is killed at the end until it is released. */
export function killAtEnd(cleanup: GroupCleanup): void {
  live.add(cleanup);
  hookEndingSignals();
}

/** The group was released. */
export function released(cleanup: GroupCleanup): void {
  live.delete(cleanup);
}
let hooked = false;

// SIGINT, SIGTERM, SIGHUP and SIGQUIT end a process by default. With a listener of ours alone
// (the application has none), the groups are killed and the signal raised again with its
// default action, so the process still ends by it (status 128+N), as the signal-exit package
// does. When the application listens, it decides; however it then ends, the groups still die.
// Only on the main thread: signals are the process's, and a Worker gets none.
const ENDING_SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP', 'SIGQUIT'] as const;
function hookEndingSignals(): void {
  if (hooked) return;
  hooked = true;
  process.on('exit', killLiveGroups);
  if (!isMainThread) return;
  for (const sig of ENDING_SIGNALS) process.on(sig, onEndingSignal);
  // The application's last listener for a signal went: libuv put the default action back
  // (Node's own 'removeListener' listener runs first). Hook it again natively.
  process.on('removeListener', (event) => {
    if (
      typeof event === 'string' &&
      event.startsWith('SIG') &&
      process.listenerCount(event) === 0
    ) {
      binding.endKillRehook();
    }
  });
}

function onEndingSignal(sig: NodeJS.Signals): void {
  if (process.listenerCount(sig) > 1) return; // the application listens: it decides
  killLiveGroups();
  binding.endKillAll();
  endContainments();
  for (const s of ENDING_SIGNALS) process.removeListener(s, onEndingSignal);
  process.kill(process.pid, sig);
  // Still here: the default action was not taken. PID 1 of a pid namespace (a container's init)
  // is not ended by a signal it has no handler for; end with the status a shell reports for it.
  process.exit(128 + (osConstants.signals[sig] ?? 0));
}

function killLiveGroups(): void {
  for (const cleanup of live) cleanup.killNow();
  // A group in the terminal's foreground (`foreground: true`) gives it back before the end.
  restoreTerminals();
}
