// The Python tests of python/ (the RunWriter for PyTorch trainers), run by Debian's interpreter, the one
// with PyTorch (/usr/bin/python3; a python3 earlier on PATH may lack torch): pytest when it has it,
// else unittest (python/tests/run.py). Exits non-zero when a test fails or torch is missing;
// ATTENTION_DEBUGGER_SKIP_PYTHON=1 skips them on a machine without PyTorch, saying so.
import { spawnSync } from 'node:child_process';

const python = process.env.ATTENTION_DEBUGGER_PYTHON ?? '/usr/bin/python3';
const args = process.argv.slice(2); // e.g. -k kill
if (process.env.ATTENTION_DEBUGGER_SKIP_PYTHON === '1') {
  console.log('python tests: skipped (ATTENTION_DEBUGGER_SKIP_PYTHON=1)');
  process.exit(0);
}
const probe = spawnSync(python, ['-c', 'import torch; print(torch.__version__)'], { encoding: 'utf8' });
if (probe.status !== 0) {
  console.error(`python tests: ${python} cannot import torch (apt-get install python3-torch, or`);
  console.error('ATTENTION_DEBUGGER_SKIP_PYTHON=1 to skip them)');
  console.log('python tests: 0 passed, 1 failed');
  process.exit(1);
}
console.log(`python tests: ${python}, torch ${probe.stdout.trim()}`);
const r = spawnSync(python, ['python/tests/run.py', ...args], {
  stdio: 'inherit',
  env: { ...process.env, OMP_NUM_THREADS: '1' },
});
process.exit(r.status === 0 ? 0 : 1);
