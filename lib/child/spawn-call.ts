// A spawn call as spawn, spawnGroup and the child_process adapter take it, read once.
import { readOptions } from '../validate';
import { spawnArguments } from './spawn-options';

/**
 * A spawn call's arguments, read once: the file and args as {@link spawnArguments} takes them,
 * then the options through readOptions with the names in `known` (the `unsupported` ones known
 * but refused). The one reading of a spawn's, a group's and the child_process adapter's call.
 * @internal
 */
export function readSpawnCall<O extends object>(
  file: unknown,
  argsOrOptions: readonly string[] | O | undefined,
  maybeOptions: O | undefined,
  known: readonly string[],
  caller: (...a: never[]) => unknown,
  unsupported?: Readonly<Record<string, string>>,
): [readonly string[], Partial<O>] {
  const [args, options] = spawnArguments(file, argsOrOptions, maybeOptions, caller);
  return [args, readOptions<O>(options, 'options', known, caller, unsupported)];
}
