// Lint rules that also encode the rooms of docs/ARCHITECTURE.md ("The rooms and their rules"): which room may
// import what.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
// The panels' pages, one folder each under webview/.
import { WEBVIEW_PANELS } from './scripts/build-webview.mjs';

const forbid = (paths, patterns, message) => ({
  'no-restricted-imports': [
    'error',
    {
      paths: paths.map((name) => ({ name, message })),
      patterns: patterns.map((group) => ({ group: [group], message })),
    },
  ],
});

const BROWSER = 'webview code runs in a browser (protocol/wire.ts is Node-only: the wire between engine and extension)';

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
    // The extension reads a run's small JSON files with the engine's own readers (a regular file within
    // its bound: no FIFO hangs the extension host), and imports nothing else of the engine.
    files: ['src/extension/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            { group: ['@tensorflow/*'], message: 'the extension never imports tfjs; the engine process owns it' },
            {
              regex: '^(\\.\\./)+engine(/(?!(io/json|io/regularFile|run/savedHeadReport)$)|$)',
              message:
                'of the engine the extension imports only its pure readers of run files: io/json, io/regularFile, ' +
                'run/savedHeadReport (docs/ARCHITECTURE.md)',
            },
          ],
        },
      ],
    },
  },
  {
    // The debug adapter (src/debug/): a Node process of its own that runs the engine as a child, as the
    // extension does; of the engine it imports only the pure telemetry code its breakpoints parse with.
    files: ['src/debug/**/*.ts'],
    rules: (() => {
      const message =
        'the debug adapter is a process of its own: no vscode, no tfjs, no extension code, and of the engine only ' +
        'telemetry/watch and telemetry/telemetry (docs/ARCHITECTURE.md)';
      return {
        'no-restricted-imports': [
          'error',
          {
            paths: [{ name: 'vscode', message }],
            patterns: [
              { group: ['@tensorflow/*'], message },
              { regex: '^(\\.\\./)+(extension|engine)(/|$)(?!telemetry/(watch|telemetry)$)', message },
            ],
          },
        ],
      };
    })(),
  },
  {
    files: ['src/protocol/**/*.ts'],
    rules: forbid(['vscode'], ['@tensorflow/*', 'node:*'], 'the protocol imports nothing heavy'),
  },
  {
    files: ['src/algorithms/**/*.ts'],
    // Nothing outside the folder (no `../`), no Node, no package: pure code every room may import.
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              regex: '^(?!\\./)',
              message:
                'algorithms/ imports nothing but itself: pure algorithms the protocol, engine, extension and pages all import',
            },
          ],
        },
      ],
    },
  },
  // webview/: browser code; each page's folder (webview/<panel>/) imports only its own panel's
  // messages (src/protocol/pages/<panel>) beside the common protocol; the shared files, none.
  ...[undefined, ...WEBVIEW_PANELS].map((panel) => ({
    files: [panel ? `webview/${panel}/**/*.ts` : 'webview/**/*.ts'],
    ...(panel ? {} : { ignores: WEBVIEW_PANELS.map((p) => `webview/${p}/**`) }),
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: ['vscode', 'fs', 'path', 'child_process'].map((name) => ({ name, message: BROWSER })),
          patterns: [
            { group: ['node:*', '@tensorflow/*', '**/protocol/wire'], message: BROWSER },
            {
              group: ['**/protocol/pages/*', ...(panel ? [`!**/protocol/pages/${panel}`] : [])],
              message: panel
                ? `the ${panel} page imports only its own panel's messages (src/protocol/pages/${panel}) and the common protocol`
                : "webview's shared files import no panel's messages (src/protocol/pages/): they belong to that panel's folder",
            },
          ],
        },
      ],
    },
  })),
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
