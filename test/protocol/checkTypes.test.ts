/**
 * A validator is tied to its type at compile time (src/protocol/check.ts `Check<T>`): each planted
 * file below pairs an interface with a validator that drifted from it in one way, and `tsc` must
 * refuse it; the well-formed pair (optional, nullable, union, nested, Float32Array fields) and a
 * method of the catalogue's form must compile. One tsc run checks every file.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { REPO } from '../helpers';

const HEADER = `import {
  type Check, arrayOf, isFiniteNumber, isFloat32Array, isString, nullable, object, oneOf, optional,
} from '${join(REPO, 'src/protocol/check')}';
import { request } from '${join(REPO, 'src/protocol/rpc')}';
export interface Payload {
  name: string;
  count?: number;
  parent: string | null;
  mode: 'zero' | 'mean';
  weights: Float32Array;
  inner: { tokens: string[] };
}
`;

/** The well-formed validator's fields; each bad case edits them. */
const FIELDS: Record<string, string> = {
  name: 'isString',
  count: 'optional(isFiniteNumber)',
  parent: 'nullable(isString)',
  mode: "oneOf(['zero', 'mean'])",
  weights: 'isFloat32Array',
  inner: 'object({ tokens: arrayOf(isString) })',
};

function validator(fields: Record<string, string | undefined>): string {
  const body = Object.entries({ ...FIELDS, ...fields })
    .filter(([, check]) => check !== undefined)
    .map(([name, check]) => `  ${name}: ${check},`)
    .join('\n');
  return `${HEADER}export const checkPayload: Check<Payload> = object({\n${body}\n});\n`;
}

const CASES: Record<string, string> = {
  wellFormed: `${validator({})}export const method = request<Payload, string[]>('m', checkPayload, arrayOf(isString));\n`,
  missingField: validator({ name: undefined }),
  missingOptionalField: validator({ count: undefined }),
  extraField: validator({ extra: 'isString' }),
  optionalForRequired: validator({ name: 'optional(isString)' }),
  requiredForOptional: validator({ count: 'isFiniteNumber' }),
  notNullable: validator({ parent: 'isString' }),
  otherUnion: validator({ mode: "oneOf(['zero', 'max'])" }),
  stringForFloat32Array: validator({ weights: 'isString' }),
  nestedFieldWrong: validator({ inner: 'object({ tokens: isString })' }),
  methodOfOtherResult: `${validator({})}export const method = request<Payload, number[]>('m', checkPayload, arrayOf(isString));\n`,
};

let errors: Map<string, string[]> | undefined;

/** tsc's errors per planted file (run once, on all of them). */
function compile(): Map<string, string[]> {
  if (errors) return errors;
  const dir = mkdtempSync(join(tmpdir(), 'check-types-'));
  try {
    for (const [name, text] of Object.entries(CASES)) writeFileSync(join(dir, `${name}.ts`), text);
    const tsc = join(REPO, 'node_modules/typescript/bin/tsc');
    const args = ['--noEmit', '--strict', '--target', 'es2022', '--module', 'esnext', '--moduleResolution', 'bundler'];
    const files = Object.keys(CASES).map((name) => join(dir, `${name}.ts`));
    const r = spawnSync(process.execPath, [tsc, ...args, '--types', 'node', ...files], { encoding: 'utf8', cwd: REPO });
    errors = new Map(Object.keys(CASES).map((name) => [name, []]));
    for (const line of r.stdout.split('\n')) {
      const m = /([A-Za-z0-9]+)\.ts\(\d+,\d+\): error (TS\d+.*)/.exec(line);
      if (m && errors.has(m[1]!)) errors.get(m[1]!)!.push(m[2]!);
      else if (/error TS/.test(line)) assert.fail(`tsc reported outside the planted files: ${line}`);
    }
    return errors;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

test('a validator of its type, and a method of checked params and result, compile', () => {
  assert.deepEqual(compile().get('wellFormed'), []);
});

for (const name of Object.keys(CASES).filter((n) => n !== 'wellFormed'))
  test(`a validator that drifted from its type fails tsc: ${name}`, () => {
    assert.ok(compile().get(name)!.length > 0, `${name} compiles`);
  });
