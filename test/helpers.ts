/** Shared test helpers: fixtures, numeric comparison, and which backends this machine runs. */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { initBackend, type BackendName } from '../src/engine/backend';

/** The repository root: the nearest folder above this (bundled) test file with a package.json. */
function findRepo(from: string): string {
  for (let dir = from; dir !== dirname(dir); dir = dirname(dir)) if (existsSync(join(dir, 'package.json'))) return dir;
  throw new Error(`no package.json above ${from}`);
}
export const REPO = findRepo(__dirname);
export const GOLDEN = join(REPO, 'test', 'fixtures', 'golden');

export function readJson<T>(path: string): T {
  return JSON.parse(readFileSync(path, 'utf8')) as T;
}

/** Largest |a − b| over two nested arrays of equal shape; throws on a shape mismatch. */
export function maxAbsDiff(a: unknown, b: unknown, path = ''): number {
  if (Array.isArray(a) || Array.isArray(b)) {
    if (!Array.isArray(a) || !Array.isArray(b) || a.length !== b.length) {
      throw new Error(`shape mismatch at ${path || 'root'}: ${Array.isArray(a) ? a.length : typeof a} vs ${Array.isArray(b) ? b.length : typeof b}`);
    }
    return a.reduce((m: number, x, i) => Math.max(m, maxAbsDiff(x, b[i], `${path}[${i}]`)), 0);
  }
  return Math.abs((a as number) - (b as number));
}

/**
 * Backends the tests exercise: wasm and cpu always; webgpu when Dawn finds an adapter (lavapipe on
 * CPU-only machines). With ATTENTION_DEBUGGER_REQUIRE_WEBGPU=1 (set by the test script after it
 * installed lavapipe) a missing webgpu is a failure, not a skip.
 */
export async function testBackends(): Promise<BackendName[]> {
  const names: BackendName[] = ['wasm', 'cpu'];
  try {
    await initBackend('webgpu');
    names.unshift('webgpu');
  } catch (err) {
    if (process.env.ATTENTION_DEBUGGER_REQUIRE_WEBGPU === '1') throw err;
    console.error(`# webgpu skipped: ${(err as Error).message}`);
  }
  return names;
}
