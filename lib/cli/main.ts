/**
 * The `procpin` command: `run`, `sweep` and `wait`. `bin/procpin` calls {@link main}. Each
 * command lives in a file of its own (`run.ts`, `sweep.ts`, `wait.ts`); the words of the command
 * line are parsed in `args.ts`, the exit statuses are decided in `status.ts`.
 * @module
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { splitAtCommand, strictParse, UsageError, type Options } from './args';
import { HELP, HELPS } from './help';
import { err, out } from './io';
import { runCommand } from './run';
import { EXIT } from './status';
import { sweepCommand } from './sweep';
import { waitCommand } from './wait';

const TOP_OPTIONS = {
  help: { type: 'boolean', short: 'h' },
  version: { type: 'boolean', short: 'V' },
} as const satisfies Options;

const COMMANDS: Record<string, (args: string[]) => Promise<number>> = {
  run: runCommand,
  sweep: sweepCommand,
  wait: waitCommand,
};

async function dispatch(argv: string[]): Promise<number> {
  const { own, rest } = splitAtCommand(argv, TOP_OPTIONS);
  const { values } = strictParse(own, TOP_OPTIONS, '', false);
  if (values.help) {
    out(HELP);
    return EXIT.OK;
  }
  if (values.version) {
    const pkg = JSON.parse(
      fs.readFileSync(path.join(__dirname, '..', '..', 'package.json'), 'utf8'),
    );
    out(`procpin ${String(pkg.version)}\n`);
    return EXIT.OK;
  }
  const [name, ...args] = rest;
  if (name === undefined) throw new UsageError('missing command');
  if (name === 'help') {
    const topic = args[0];
    if (topic === undefined) out(HELP);
    else if (HELPS[topic]) out(HELPS[topic]);
    else throw new UsageError(`unknown command '${topic}'`);
    return EXIT.OK;
  }
  const command = COMMANDS[name];
  if (!command) throw new UsageError(`unknown command '${name}'`);
  try {
    return await command(args);
  } catch (e) {
    if (e instanceof UsageError && e.command === undefined) e.command = name;
    throw e;
  }
}

/**
 * Runs the `procpin` command with `argv` (the arguments after the program name) and resolves
 * with the exit status. Usage errors are reported on stderr and give 2.
 */
export async function main(argv: string[]): Promise<number> {
  try {
    return await dispatch(argv);
  } catch (e) {
    if (e instanceof UsageError) {
      const cmd = e.command ? ` ${e.command}` : '';
      err(`procpin${cmd}: ${e.message}\nTry 'procpin${cmd} --help'.\n`);
      return EXIT.USAGE;
    }
    err(`procpin: ${(e as Error)?.stack ?? String(e)}\n`);
    return EXIT.PROCPIN_FAILED;
  }
}
