/**
 * Each page handles only its own panel's messages (src/protocol/pages/<panel>.ts): a line planted
 * in each page's `handle` that asks for another panel's message type must fail to type-check, and
 * one that asks for the page's own type must pass. The pages are compiled with the webview's
 * tsconfig, each file read with its planted lines in place of the file on disk.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import ts from 'typescript';
import { REPO } from '../helpers';

/** The checkout whose pages are compiled (PAGES_LINT_REPO: another checkout, to see this test fail on it). */
const ROOT = process.env.PAGES_LINT_REPO ?? REPO;

/** Each page, a message type of its own, and one only another panel's page is sent. */
const PLANTS: { page: string; own: string; other: string }[] = [
  { page: 'dashboard', own: 'metrics', other: 'attentionBlock' },
  { page: 'attention', own: 'attention', other: 'metrics' },
  { page: 'head', own: 'snapshots', other: 'telemetry' },
  { page: 'positional', own: 'positional', other: 'metrics' },
  { page: 'heads', own: 'telemetry', other: 'positional' },
  { page: 'beam', own: 'state', other: 'snapshots' },
];

/** The page's source with a line for `own` and one for `other` at the top of its handle(m). */
function planted(source: string, own: string, other: string): { text: string; otherLine: number } {
  const at = /function handle\(m: [^)]*\): void \{\n/.exec(source);
  if (!at) throw new Error('the page has no `function handle(m: …): void {`');
  const cut = at.index + at[0].length;
  const lines = [`  if (m.type === '${own}') void m;`, `  if (m.type === '${other}') void m;`];
  const otherLine = source.slice(0, cut).split('\n').length; // 0-based line of the second planted line
  return { text: `${source.slice(0, cut)}${lines.join('\n')}\n${source.slice(cut)}`, otherLine };
}

test("a page that handles another panel's message does not type-check; its own messages do", () => {
  const config = ts.getParsedCommandLineOfConfigFile(
    join(ROOT, 'webview', 'tsconfig.json'),
    {},
    {
      ...ts.sys,
      onUnRecoverableConfigFileDiagnostic: (d) => assert.fail(ts.flattenDiagnosticMessageText(d.messageText, '\n')),
    },
  )!;
  const files = new Map<string, { text: string; otherLine: number; other: string }>();
  for (const { page, own, other } of PLANTS) {
    const file = join(ROOT, 'webview', page, 'page.ts');
    files.set(file, { ...planted(readFileSync(file, 'utf8'), own, other), other });
  }
  const host = ts.createCompilerHost(config.options);
  const read = host.readFile.bind(host);
  host.readFile = (f) => files.get(f)?.text ?? read(f);
  const program = ts.createProgram({
    rootNames: config.fileNames,
    options: { ...config.options, noEmit: true },
    host,
  });
  for (const [file, { otherLine, other }] of files) {
    const found = program.getSemanticDiagnostics(program.getSourceFile(file)).map((d) => ({
      line: d.file!.getLineAndCharacterOfPosition(d.start!).line,
      text: ts.flattenDiagnosticMessageText(d.messageText, ' '),
    }));
    const name = file.slice(ROOT.length + 1);
    assert.ok(
      found.some((d) => d.line === otherLine && d.text.includes(`'"${other}"'`)),
      `${name}: handling '${other}' (another panel's message) type-checks; it must not`,
    );
    assert.deepEqual(
      found.filter((d) => d.line !== otherLine),
      [],
      `${name}: only the line handling another panel's message fails`,
    );
  }
});
