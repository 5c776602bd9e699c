/**
 * Where `contain: 'cgroup'` makes its cgroups: the cgroup2 mount (from `/proc/self/mountinfo`) and,
 * as root, a `procpin` directory at its top; otherwise this process's own cgroup (from
 * `/proc/self/cgroup`) when it is delegated to this user.
 * @module
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { readText } from './common';

/** @internal Where procpin's cgroups go. */
export interface CgroupPlace {
  /** Mount point of cgroup2. */
  mount: string;
  /** Where procpin's cgroups go (absolute path). */
  base: string;
}

let placeCache: CgroupPlace | string | undefined;

/** @internal The place found so far, without looking for it. */
export function knownCgroupPlace(): CgroupPlace | string | undefined {
  return placeCache;
}

/** @internal Test hook: find the place again. */
export function resetCgroupPlace(): void {
  placeCache = undefined;
}

// mountinfo escapes space, tab, newline and backslash as octal.
function unescapeMount(s: string): string {
  return s.replace(/\\([0-7]{3})/g, (_m, o: string) => String.fromCharCode(parseInt(o, 8)));
}

/** @internal The cgroup2 mount and the directory procpin's cgroups go in, or why there is none. */
export function cgroupPlace(): CgroupPlace | string {
  if (placeCache !== undefined) return placeCache;
  placeCache = findCgroupPlace();
  return placeCache;
}

function findCgroupPlace(): CgroupPlace | string {
  const mountinfo = readText('/proc/self/mountinfo');
  if (mountinfo === null) return '/proc/self/mountinfo cannot be read';
  let mount: string | null = null;
  let root = '/';
  for (const line of mountinfo.split('\n')) {
    const [left, right] = line.split(' - ');
    if (right === undefined || left === undefined) continue;
    if (right.split(' ')[0] !== 'cgroup2') continue;
    const f = left.split(' ');
    mount = unescapeMount(f[4] ?? '');
    root = unescapeMount(f[3] ?? '/');
    break;
  }
  if (mount === null) return 'no cgroup2 file system is mounted';
  const self = readText('/proc/self/cgroup');
  const line = self?.split('\n').find((l) => l.startsWith('0::'));
  if (line === undefined)
    return 'this process is in no cgroup v2 (/proc/self/cgroup has no 0:: line)';
  let rel = line.slice(3);
  if (root !== '/' && rel.startsWith(root)) rel = rel.slice(root.length);
  if (rel.endsWith(' (deleted)')) return 'this process is in a removed cgroup';
  const own = path.join(mount, rel);
  let base: string;
  if (process.geteuid?.() === 0) {
    base = path.join(mount, 'procpin');
    try {
      fs.mkdirSync(base, { mode: 0o755 });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') {
        return `${base} cannot be made (${(err as Error).message})`;
      }
    }
  } else {
    // A subtree delegated to us: our own cgroup, owned by us, its cgroup.procs writable.
    base = own;
    try {
      const st = fs.statSync(own);
      if (st.uid !== process.geteuid?.()) return `${own} is not delegated to this user`;
      fs.accessSync(own, fs.constants.W_OK);
      fs.accessSync(path.join(own, 'cgroup.procs'), fs.constants.W_OK);
    } catch (err) {
      return `${own} is not writable (${(err as Error).message})`;
    }
  }
  return { mount, base };
}
