/**
 * `procpin sweep`: removes the entries a dead owner left (`--prefix`), or the cgroups of a dead
 * procpin (`--cgroups`), and says what was removed and what was kept, and why.
 * @internal
 * @module
 */
import * as path from 'node:path';
import type { SweepEntry, SweepReport } from '../index';
import { strictParse, UsageError, type Options } from './args';
import { SWEEP_HELP } from './help';
import { err, loadLibrary, out } from './io';
import { EXIT } from './status';

const SWEEP_OPTIONS = {
  prefix: { type: 'string', short: 'p' },
  cgroups: { type: 'boolean' },
  'dry-run': { type: 'boolean', short: 'n' },
  json: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
} as const satisfies Options;

function errorJson(e: Error): Record<string, unknown> {
  const o: Record<string, unknown> = { message: e.message };
  for (const k of ['code', 'errno', 'syscall', 'path'] as const) {
    const v = (e as unknown as Record<string, unknown>)[k];
    if (v !== undefined) o[k] = v;
  }
  return o;
}

export async function sweepCommand(args: string[]): Promise<number> {
  const { values, positionals } = strictParse(args, SWEEP_OPTIONS, 'sweep', true);
  if (values.help) {
    out(SWEEP_HELP);
    return EXIT.OK;
  }
  if (values.cgroups) return sweepCgroupsCommand(positionals, values);
  const dir = positionals[0];
  if (dir === undefined) throw new UsageError('missing DIR', 'sweep');
  if (positionals.length > 1)
    throw new UsageError(`unexpected argument '${positionals[1]}'`, 'sweep');
  if (values.prefix === undefined) throw new UsageError('missing --prefix', 'sweep');
  const dryRun = values['dry-run'] === true;

  const lib = loadLibrary();
  if (lib === null) return EXIT.PROCPIN_FAILED;
  let report: SweepReport;
  try {
    report = await lib.sweep(dir, { prefix: values.prefix, dryRun });
  } catch (e) {
    const code = (e as { code?: string }).code ?? '';
    if (code.startsWith('ERR_INVALID_ARG') || code === 'ERR_OUT_OF_RANGE') {
      throw new UsageError((e as Error).message, 'sweep');
    }
    throw e;
  }

  if (values.json) {
    // Errors become plain objects: JSON.stringify would drop an Error's message.
    // A name that is not UTF-8 goes out as its bytes escaped (`\\xff`): JSON holds only text.
    const entry = (e: SweepEntry) => ({
      ...e,
      name: shownName(e.name),
      ...(e.error ? { error: errorJson(e.error) } : {}),
    });
    const json: Record<string, unknown> = {
      removed: report.removed.map(entry),
      kept: report.kept.map(entry),
    };
    outJson(json, report.error);
  } else {
    const removed = dryRun ? 'would remove' : 'removed';
    const width = Math.max(removed.length, 'kept'.length);
    for (const e of report.removed)
      out(
        `${removed.padEnd(width)}  ${path.join(dir, shownName(e.name))}  (pid ${e.pid} is dead)\n`,
      );
    for (const e of report.kept) {
      const why = e.error ? `${e.reason ?? 'error'}: ${e.error.message}` : (e.reason ?? 'kept');
      out(
        `${'kept'.padEnd(width)}  ${path.join(dir, shownName(e.name))}  (pid ${e.pid}: ${why})\n`,
      );
    }
  }
  if (report.error) {
    err(`procpin sweep: ${dir}: ${report.error.message}\n`);
    return EXIT.FAILURE;
  }
  return EXIT.OK;
}

async function sweepCgroupsCommand(
  positionals: string[],
  values: { prefix?: string; 'dry-run'?: boolean; json?: boolean },
): Promise<number> {
  if (positionals.length > 0)
    throw new UsageError(`unexpected argument '${positionals[0]}'`, 'sweep');
  if (values.prefix !== undefined)
    throw new UsageError('--prefix does not go with --cgroups', 'sweep');
  const dryRun = values['dry-run'] === true;
  const lib = loadLibrary();
  if (lib === null) return EXIT.PROCPIN_FAILED;
  const report = await lib.sweepCgroups({ dryRun });
  if (values.json) {
    const json: Record<string, unknown> = { removed: report.removed, kept: report.kept };
    outJson(json, report.error);
  } else {
    const removed = dryRun ? 'would remove' : 'removed';
    const width = Math.max(removed.length, 'kept'.length);
    for (const e of report.removed)
      out(`${removed.padEnd(width)}  cgroup ${shownName(e.name)}  (procpin ${e.pid} is dead)\n`);
    for (const e of report.kept) {
      const why =
        e.reason === 'namespace'
          ? 'in another pid namespace, not provably dead'
          : (e.reason ?? 'kept');
      out(`${'kept'.padEnd(width)}  cgroup ${shownName(e.name)}  (procpin ${e.pid}: ${why})\n`);
    }
  }
  if (report.error) {
    err(`procpin sweep --cgroups: ${report.error.message}\n`);
    return EXIT.FAILURE;
  }
  return EXIT.OK;
}

/** Writes a report's JSON (with its `error`, when there is one) to stdout. */
function outJson(json: Record<string, unknown>, error: Error | undefined): void {
  if (error) json['error'] = errorJson(error);
  out(`${JSON.stringify(json, null, 2)}\n`);
}

/** A sweep entry's name for a terminal or JSON: a Buffer (not UTF-8) with every byte above 0x7f as `\\xNN`. */
function shownName(name: string | Buffer): string {
  if (typeof name === 'string') return name;
  let s = '';
  for (const b of name)
    s += b < 0x80 ? String.fromCharCode(b) : `\\x${b.toString(16).padStart(2, '0')}`;
  return s;
}
