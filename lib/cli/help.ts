/**
 * The help texts of `procpin` and of each command.
 * @internal
 * @module
 */

export const HELP = `Usage: procpin <command> [options]

Commands:
  run [options] [--] COMMAND [ARG...]   run COMMAND as a process group; nothing it starts
                                        outlives it
  sweep DIR --prefix P [options]        remove entries named P<pid> whose owner is dead
  wait [options] PID...                 wait until the processes exit (any process)
  help [COMMAND]                        show help for a command

Options:
  -h, --help      show this help ('procpin COMMAND --help' for a command's)
  -V, --version   show procpin's version

Exit status: see 'procpin run --help'.
`;

export const RUN_HELP = `Usage: procpin run [options] [--] COMMAND [ARG...]

Runs COMMAND in a new process group with procpin's standard input, output and error, and cleans
the whole group (the kill signal, the grace period, then SIGKILL) when COMMAND exits, when the
timeout fires, or when procpin gets SIGINT, SIGTERM or SIGHUP (forwarded to the group first).
On a terminal the group gets the foreground: ^C and ^Z reach it, and the terminal is restored.

Options:
      --grace D          time between the kill signal and SIGKILL (default 5s)
      --timeout D        stop the command after D (0: no timeout)
      --kill-signal SIG  the signal that starts a cleanup (default SIGTERM)
      --no-parent-death  let the command survive procpin's death (default: SIGKILL on it)
      --contain[=MODE]   hold the group where nothing leaves it and the kernel ends it:
                         pidns (a pid namespace: nothing outlives procpin, even SIGKILLed),
                         cgroup (a cgroup v2: 'procpin sweep --cgroups' ends a dead procpin's),
                         auto (the default MODE: the strongest available)
  -v, --verbose          print the cleanup phases (and the containment used) on stderr
  -h, --help             show this help

Durations: 500ms, 2s, 1m, 1h, or plain milliseconds.

Exit status:
  N        COMMAND exited with status N
  128+N    signal N ended COMMAND (137: it was killed after the grace period)
  124      the timeout fired
  125      procpin itself failed
  126      COMMAND was found but could not be run
  127      COMMAND was not found
  2        usage error
`;

export const SWEEP_HELP = `Usage: procpin sweep DIR --prefix P [--dry-run] [--json]
       procpin sweep --cgroups [--dry-run] [--json]

Removes the entries of DIR named P<pid> (then the end of the name, '-' or '.') that a dead owner
left behind: only when the pid names no live process, nobody holds a lock on the entry, a socket
does not listen, and the entry is this user's. Prints what was removed and what was kept, and why.

Options:
  -p, --prefix P   the name prefix (required)
      --cgroups    instead: kill and remove the cgroups of 'procpin run --contain=cgroup'
                   (and spawnGroup's contain: 'cgroup') whose procpin is dead; one of
                   another pid namespace that cannot be proven dead is kept ('namespace')
  -n, --dry-run    decide, but remove nothing
      --json       print the report as JSON: { "removed": [...], "kept": [...] }
  -h, --help       show this help

Exit status: 0, 1 when DIR cannot be read, 2 usage error.
`;

export const WAIT_HELP = `Usage: procpin wait [options] PID...

Waits until every PID has exited. Any process, not only procpin's children: each is watched
through a pidfd, so a pid reused meanwhile is not mistaken for the one named. A zombie counts as
exited.

Options:
  -t, --timeout D   give up after D (0: no timeout)
  -e, --exited      a PID that does not exist counts as exited (default: an error)
  -v, --verbose     say on stderr when each PID exits
  -h, --help        show this help

Exit status: 0 all exited, 124 timeout, 1 a PID could not be watched (no such process without
--exited), 2 usage error.
`;

export const HELPS: Record<string, string> = { run: RUN_HELP, sweep: SWEEP_HELP, wait: WAIT_HELP };
