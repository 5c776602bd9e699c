// SPEC conventions, "Types ship", for the TypeScript projects that supervisors are: many still
// resolve modules the node10 way (`moduleResolution: "node"`), which reads no `exports` map, and
// type their kill function as tree-kill's `(pid: number, signal?: string) => void`.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { root } from '../helpers.mjs';

test("procpin/child_process's types resolve under moduleResolution node10, and its kill fits tree-kill's type [C.types.ship]", () => {
  const dir = join(root, 'test', '.tmp', `types-node10-${process.pid}`);
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(join(dir, 'node_modules'), { recursive: true });
  try {
    symlinkSync(root, join(dir, 'node_modules', 'procpin'));
    writeFileSync(
      join(dir, 'supervisor.ts'),
      [
        "import { spawn, kill } from 'procpin/child_process';",
        "import { spawnGroup } from 'procpin';",
        '// tree-kill as a supervisor types it',
        'type KillProcess = (pid: number, signal?: string) => void;',
        'const killProcess: KillProcess = kill;',
        "const child = spawn('sleep', ['1']);",
        "if (child.pid !== undefined) killProcess(child.pid, 'SIGTERM');",
        "spawnGroup('true');",
        '',
      ].join('\n'),
    );
    writeFileSync(
      join(dir, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          target: 'ES2022',
          module: 'commonjs',
          moduleResolution: 'node',
          lib: ['ES2022', 'ESNext.Disposable'],
          types: ['node'],
          typeRoots: [join(root, 'node_modules', '@types')],
          strict: true,
          noEmit: true,
          skipLibCheck: true,
        },
        include: ['*.ts'],
      }),
    );
    const tsc = join(root, 'node_modules', 'typescript', 'bin', 'tsc');
    const r = spawnSync(process.execPath, [tsc, '-p', join(dir, 'tsconfig.json')], { encoding: 'utf8' });
    assert.equal(r.status, 0, r.stdout + r.stderr);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
