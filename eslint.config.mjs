// ESLint flat config. The rules chosen catch defects, not taste (Prettier owns the layout):
// a promise nobody awaits (in a test: an assertion that never runs), a variable never used, a
// global that does not exist, `==` coercion, a case that falls through, a condition that is
// always true or false.
import js from '@eslint/js';
import globals from 'globals';
import tseslint from 'typescript-eslint';

/** Rules every file gets, TypeScript or JavaScript. */
const common = {
  eqeqeq: ['error', 'always', { null: 'ignore' }],
  'no-fallthrough': 'error',
  'no-self-compare': 'error',
  'no-unmodified-loop-condition': 'error',
  'no-unreachable-loop': 'error',
  'no-constant-binary-expression': 'error',
  'no-throw-literal': 'error',
  'prefer-const': ['error', { destructuring: 'all' }],
  'no-var': 'error',
};

/** Promise rules that need types; given to the tests too, where an unawaited assertion passes. */
const promises = {
  // node:test's test()/describe() return a promise that the runner itself awaits; a subtest's
  // t.test() is not among them: one left unawaited is cancelled when its parent ends.
  '@typescript-eslint/no-floating-promises': [
    'error',
    {
      allowForKnownSafeCalls: [
        { from: 'package', package: 'node:test', name: ['test', 'describe', 'it', 'suite'] },
      ],
    },
  ],
  '@typescript-eslint/no-misused-promises': ['error', { checksVoidReturn: { arguments: false } }],
  '@typescript-eslint/await-thenable': 'error',
};

/** `_name` marks an argument or binding kept on purpose (a callback's signature). */
const unused = {
  args: 'after-used',
  argsIgnorePattern: '^_',
  varsIgnorePattern: '^_',
  caughtErrors: 'none',
  ignoreRestSiblings: true,
};

/** One no-restricted-imports entry per room: `up` lists what that room may not load as code. */
function layerRules(rooms) {
  return rooms.map(({ files, up }) => ({
    files,
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: up,
              allowTypeImports: true,
              message:
                'A lower layer or a sibling room: import a type only (docs/architecture.md).',
            },
          ],
        },
      ],
    },
  }));
}

export default tseslint.config(
  {
    ignores: [
      'dist/**',
      'build/**',
      'build-*/**',
      'prebuilds/**',
      'node_modules/**',
      'docs/api/**',
      'test/.tmp/**',
      'bench/out/**',
      'bench/.bin/**',
      // Compiled by test/spec/types.test.mjs with its own strict tsconfig.
      'test/fixtures/types/**',
    ],
  },
  {
    linterOptions: { reportUnusedDisableDirectives: 'error' },
  },

  // lib/: the published TypeScript, linted with its own tsconfig's types.
  {
    files: ['lib/**/*.ts', 'lib/**/*.mts'],
    extends: [js.configs.recommended, ...tseslint.configs.recommendedTypeChecked],
    languageOptions: {
      parserOptions: { project: './tsconfig.json', tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      ...common,
      ...promises,
      '@typescript-eslint/no-unused-vars': ['error', unused],
      '@typescript-eslint/switch-exhaustiveness-check': [
        'error',
        { considerDefaultExhaustiveForUnions: true },
      ],
      '@typescript-eslint/only-throw-error': 'error',
      'no-template-curly-in-string': 'error',
      // Reported by the recommended set, but not defects here:
      // - every exported function re-checks its arguments at run time for JavaScript callers,
      //   so no-unnecessary-condition would call each validation "always false";
      // - a method passed as the stack-start of Error.captureStackTrace (`this.kill`) is never
      //   called, which unbound-method cannot know;
      // - `catch (err) { return Promise.reject(err) }` forwards what was thrown, Error or not;
      // - `Signal | 0` documents that 0 (a probe) is accepted, though `number` covers it;
      // - the addon is loaded with require(), and an emitter class merges its event interface.
      '@typescript-eslint/unbound-method': 'off',
      '@typescript-eslint/prefer-promise-reject-errors': 'off',
      '@typescript-eslint/no-redundant-type-constituents': 'off',
      '@typescript-eslint/no-require-imports': 'off',
      '@typescript-eslint/no-unsafe-declaration-merging': 'off',
      // The binding's boundary is typed in lib/binding.ts; `any` elsewhere is a finding, but the
      // unsafe-* family reports every use of a value that came from one, several times over.
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
    },
  },

  // The layer rules of docs/architecture.md: imports go down the stack, a room reaches into a
  // sibling room only for a type.
  ...layerRules([
    {
      files: [
        'lib/binding.ts',
        'lib/errors.ts',
        'lib/validate.ts',
        'lib/signals.ts',
        'lib/proc.ts',
        'lib/primitives.ts',
        'lib/waitinfo.ts',
      ],
      up: ['./child/*', './group/*', './contain/*', './sweep/*', './cli/*', './child_process'],
    },
    {
      files: ['lib/child/**'],
      up: ['../group/*', '../contain/*', '../sweep/*', '../cli/*', '../child_process'],
    },
    {
      files: ['lib/group/**', 'lib/contain/**'],
      up: ['../sweep/*', '../cli/*', '../child_process'],
    },
    {
      files: ['lib/sweep/**'],
      up: ['../child/*', '../group/*', '../contain/*', '../cli/*', '../child_process'],
    },
    { files: ['lib/cli/**'], up: ['../*', '!../index', '!../signals'] },
  ]),

  // test/, bench/, scripts/: plain ES modules on Node, type-aware through tsconfig.test.json
  // (allowJs + checkJs) so that a floating promise in a test is caught.
  {
    files: ['**/*.mjs', '**/*.cjs', '**/*.js'],
    extends: [js.configs.recommended],
    languageOptions: {
      ecmaVersion: 2024,
      globals: { ...globals.node },
    },
    rules: {
      ...common,
      'no-unused-vars': ['error', unused],
      // Tests end in `catch {}` on purpose (a process already gone); a block that is empty
      // without even a comment is still reported.
      'no-empty': ['error', { allowEmptyCatch: true }],
    },
  },
  {
    files: ['**/*.cjs'],
    languageOptions: { sourceType: 'commonjs' },
  },
  {
    files: ['test/**/*.mjs', 'bench/**/*.mjs', 'scripts/**/*.mjs'],
    ignores: ['test/fixtures/**/*.cjs'],
    languageOptions: {
      parser: tseslint.parser,
      parserOptions: { project: './tsconfig.test.json', tsconfigRootDir: import.meta.dirname },
    },
    plugins: { '@typescript-eslint': tseslint.plugin },
    rules: promises,
  },
);
