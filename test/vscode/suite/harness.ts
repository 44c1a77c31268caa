/**
 * A tiny test runner for the extension host (no mocha here): test files call `test()` when they
 * are imported; `runAll()` runs them in order, each with a timeout, prints one line per test
 * through console (which reaches the launcher's codeAutomationLog, or the desktop's stdout), and
 * ends with `N passed, N failed` alone on a line.
 */
interface TestCase {
  name: string;
  fn: () => Promise<void> | void;
  timeoutMs: number;
}

const tests: TestCase[] = [];
let diagnose: (() => string[]) | undefined;

/** Lines to print after a failing test (the extension's recent output, say). */
export function onFailurePrint(lines: () => string[]): void {
  diagnose = lines;
}

export function test(name: string, fn: () => Promise<void> | void, timeoutMs = 30_000): void {
  tests.push({ name, fn, timeoutMs });
}

export async function runAll(): Promise<{ passed: number; failed: number }> {
  let passed = 0;
  let failed = 0;
  // VSCODE_TEST_GREP='a|b': the tests whose name contains a or b.
  const only = process.env['VSCODE_TEST_GREP']?.split('|').filter(Boolean);
  for (const t of tests) {
    if (only?.length && !only.some((o) => t.name.includes(o))) continue;
    const t0 = Date.now();
    let timer: NodeJS.Timeout | undefined;
    try {
      await Promise.race([
        Promise.resolve().then(t.fn),
        new Promise(
          (_, reject) =>
            (timer = setTimeout(() => reject(new Error(`timed out after ${t.timeoutMs} ms`)), t.timeoutMs)),
        ),
      ]);
      passed++;
      console.log(`  ok    ${t.name} (${Date.now() - t0} ms)`);
    } catch (err) {
      failed++;
      console.log(`  FAIL  ${t.name} (${Date.now() - t0} ms)`);
      console.log(
        `        ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`.replace(/\n/g, '\n        '),
      );
      for (const line of diagnose?.() ?? []) console.log(`        | ${line}`);
    } finally {
      clearTimeout(timer);
    }
  }
  console.log(`${passed} passed, ${failed} failed`);
  return { passed, failed };
}

/** Resolves when `event` fires with a value satisfying `pred`, or rejects after `ms`. */
export function waitFor<T>(
  event: (listener: (e: T) => void) => { dispose(): void },
  pred: (e: T) => boolean,
  ms: number,
  what: string,
): Promise<T> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      sub.dispose();
      reject(new Error(`timed out after ${ms} ms waiting for ${what}`));
    }, ms);
    const sub = event((e) => {
      if (!pred(e)) return;
      clearTimeout(timer);
      sub.dispose();
      resolve(e);
    });
  });
}
