// What the close_range tests' child scripts share (close-range.test.mjs, primitives-oldkernel):
// the six descriptors the child inherits and the names its script starts with.

/** The descriptors a close_range child inherits without O_CLOEXEC: /dev/null at 100..105. */
export const HIGH = [100, 101, 102, 103, 104, 105];

/**
 * The opening of a close_range child's script (an ES module that imported procpin as `p` and
 * readdirSync, readFileSync from node:fs): `C` (the constants), `opened` (HIGH), `fds()` (which of
 * them are open), `flags(fd)` (its fdinfo flags), `errOf(f)` (what f throws, or null), and `a`..`f`.
 */
export const CLOSE_RANGE_PRELUDE = `
    const { constants: C } = p;
    const opened = ${JSON.stringify(HIGH)};
    const fds = () => readdirSync('/proc/self/fd').map(Number).filter((x) => opened.includes(x));
    const flags = (fd) => Number.parseInt(readFileSync('/proc/self/fdinfo/' + fd, 'utf8').match(/flags:\\s*(\\d+)/)[1], 8);
    const errOf = (f) => { try { f(); return null; } catch (e) { return { code: e.code, errno: e.errno, syscall: e.syscall, message: e.message }; } };
    const [a, b, c, d, e, f] = opened;`;
