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

// Listeners that, like this one, take an ending signal over only when nobody else listens: every
// copy of procpin's (a dependency may bring its own), and signal-exit's (its loaded instances,
// one listener each, are counted in the emitter it shares: v4's under a global symbol, v3's on
// `process`). Neither is the application deciding to go on: read so, each would wait for the
// other and the signal would end nothing.
const kEndHook = Symbol.for('procpin.endingSignalListener');
Object.defineProperty(onEndingSignal, kEndHook, { value: true });

/** The `count` of a signal-exit emitter kept under `key` on `holder`, or 0. */
function signalExitCount(holder: object, key: PropertyKey): number {
  const emitter: unknown = Object.getOwnPropertyDescriptor(holder, key)?.value;
  if (typeof emitter !== 'object' || emitter === null) return 0;
  const count: unknown = Object.getOwnPropertyDescriptor(emitter, 'count')?.value;
  return typeof count === 'number' && count > 0 ? count : 0;
}

/** Listeners for `sig` that are the application's own, not an end hook's. */
function applicationListeners(sig: NodeJS.Signals): number {
  const others = process.listeners(sig).filter((l) => !Object.hasOwn(l, kEndHook)).length;
  return (
    others -
    signalExitCount(globalThis, Symbol.for('signal-exit emitter')) -
    signalExitCount(process, '__signal_exit_emitter__')
  );
}

function onEndingSignal(sig: NodeJS.Signals): void {
  if (applicationListeners(sig) > 0) return; // the application listens: it decides
  killLiveGroups();
  binding.endKillAll();
  endContainments();
  for (const s of ENDING_SIGNALS) process.removeListener(s, onEndingSignal);
  process.kill(process.pid, sig);
  // Another end hook still listens (signal-exit, another copy of procpin): the signal raised
  // again reaches it alone now, and it ends the process by it.
  if (process.listenerCount(sig) > 0) return;
  // Still here: the default action was not taken. PID 1 of a pid namespace (a container's init)
  // is not ended by a signal it has no handler for; end with the status a shell reports for it.
  process.exit(128 + (osConstants.signals[sig] ?? 0));
}

function killLiveGroups(): void {
  for (const cleanup of live) cleanup.killNow();
  // A group in the terminal's foreground (`foreground: true`) gives it back before the end.
  restoreTerminals();
}
