// Lint rules that also encode the rooms of docs/ARCHITECTURE.md ("The rooms and their rules"): which room may
// import what.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

const forbid = (paths, patterns, message) => ({
  'no-restricted-imports': [
    'error',
    {
      paths: paths.map((name) => ({ name, message })),
      patterns: patterns.map((group) => ({ group: [group], message })),
    },
  ],
});

export default tseslint.config(
  { ignores: ['out/', 'dist/', 'node_modules/', '.vscode-test/', 'test/fixtures/'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/no-require-imports': 'off',
    },
  },
  {
    files: ['src/engine/**/*.ts'],
    rules: forbid(['vscode'], [], 'the engine never imports vscode (docs/ARCHITECTURE.md)'),
  },
  {
    // The engine's rooms sit below its JSON-RPC side: only the command line (`serve`) starts it.
    files: ['src/engine/**/*.ts'],
    ignores: ['src/engine/server/**', 'src/engine/cli/**'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: [{ name: 'vscode', message: 'the engine never imports vscode (docs/ARCHITECTURE.md)' }],
          patterns: [
            {
              group: ['**/server', '**/server/*'],
              message: 'only cli/ imports server/: the rooms below it never import upward (docs/ARCHITECTURE.md)',
            },
          ],
        },
      ],
    },
  },
  {
    // The model is the paper over an ops interface (ops/modelOps.ts); which kernels run is ops/'s
    // business. Repeats the rule above (a later block replaces it) and adds backend/.
    files: ['src/engine/model/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: [{ name: 'vscode', message: 'the engine never imports vscode (docs/ARCHITECTURE.md)' }],
          patterns: [
            {
              group: ['**/server', '**/server/*'],
              message: 'only cli/ imports server/: the rooms below it never import upward (docs/ARCHITECTURE.md)',
            },
            {
              group: ['**/backend', '**/backend/**'],
              message:
                'model/ sees only the ops interface (ops/modelOps.ts); the kernels are chosen in ops/ (docs/ARCHITECTURE.md)',
            },
          ],
        },
      ],
    },
  },
  {
    files: ['src/extension/**/*.ts'],
    rules: forbid([], ['@tensorflow/*'], 'the extension never imports tfjs; the engine process owns it'),
  },
  {
    files: ['src/protocol/**/*.ts'],
    rules: forbid(['vscode'], ['@tensorflow/*', 'node:*'], 'the protocol imports nothing heavy'),
  },
  {
    files: ['src/shared/**/*.ts'],
    // Nothing outside the folder (no `../`), no Node, no package: pure code every room may import.
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              regex: '^(?!\\./)',
              message:
                'shared/ imports nothing but itself: pure algorithms the protocol, engine, extension and pages all import',
            },
          ],
        },
      ],
    },
  },
  {
    files: ['webview/**/*.ts'],
    rules: forbid(
      ['vscode', 'fs', 'path', 'child_process'],
      ['node:*', '@tensorflow/*', '**/protocol/wire'],
      'webview code runs in a browser (protocol/wire.ts is Node-only: the wire between engine and extension)',
    ),
  },
  {
    // Test pages' functions run in Chromium through page.evaluate.
    files: ['test/webview/browser/*.mjs'],
    languageOptions: {
      globals: {
        window: 'readonly',
        document: 'readonly',
        Plotly: 'readonly',
        getComputedStyle: 'readonly',
        setTimeout: 'readonly',
      },
    },
  },
  {
    files: ['scripts/**/*.mjs', 'bin/*', 'test/**/*.mjs'],
    languageOptions: {
      globals: { process: 'readonly', console: 'readonly', require: 'readonly', __dirname: 'readonly' },
    },
  },
);
