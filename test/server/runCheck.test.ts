/**
 * run/check on the real `serve` process (dist/cli.js): a micro run the engine trained is a valid
 * folder, every file it read named; a copy with a line of metrics.jsonl broken on purpose answers
 * one finding naming that file, line and field with its severity, as `check-run` prints it; a
 * folder that is not there is one finding too; a relative path is refused naming runDir.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { appendFileSync, cpSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { checkRunCheck, type RunCheck } from '../../src/protocol/runCheck';
import { REPO } from '../helpers';
import { micro } from '../cli/malformed-plants';
import { scratch } from '../train/helpers';
import { RawEngine } from './rawEngine';

const dir = scratch('ad-run-check-');
const run = join(dir, 'run');
let engine: RawEngine;

before(async () => {
  writeFileSync(join(dir, 'micro.json'), micro({}));
  const args = ['train', '--backend', 'wasm', '--task', 'copy', '--config', join(dir, 'micro.json'), '--out', run];
  const r = spawnSync(process.execPath, [join(REPO, 'dist', 'cli.js'), ...args], { encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  engine = new RawEngine();
});

after(() => engine.proc.kill());

const checkOf = async (runDir: string): Promise<RunCheck> => {
  const r = await engine.ask('run/check', { runDir });
  assert.equal(r.error, undefined);
  assert.equal(checkRunCheck(r.result, 'result'), undefined, 'the answer passes its own check');
  return r.result as RunCheck;
};

test('run/check: a trained run is valid, and the answer names the files read', async () => {
  const c = await checkOf(run);
  assert.equal(c.runDir, run);
  assert.equal(c.ok, true, JSON.stringify(c.findings));
  assert.deepEqual(c.findings, []);
  assert.equal(c.omitted, 0);
  for (const f of ['config.json', 'metrics.jsonl', 'status.json']) assert.ok(c.files.includes(f), `${f} in ${c.files}`);
  assert.ok(
    c.files.some((f) => /^checkpoints\/step-\d+\.safetensors$/.test(f)),
    `a checkpoint in ${c.files}`,
  );
});

test('run/check: a broken line is one finding with its file, line, field and severity, as check-run says', async () => {
  const broken = join(dir, 'broken');
  cpSync(run, broken, { recursive: true });
  appendFileSync(join(broken, 'metrics.jsonl'), '{"step": 99, "lr": "fast", "loss": 1}\n');
  const c = await checkOf(broken);
  assert.equal(c.ok, false);
  const lines = readFileSync(join(broken, 'metrics.jsonl'), 'utf8').split('\n').length - 1;
  assert.equal(c.findings.length, 1, JSON.stringify(c.findings));
  const f = c.findings[0]!;
  assert.equal(f.file, 'metrics.jsonl');
  assert.equal(f.line, lines, 'the line appended last');
  assert.equal(f.field, 'lr');
  assert.equal(f.severity, 'error');
  assert.match(f.message, /expected a number, got "fast"/);
  const cli = spawnSync(process.execPath, [join(REPO, 'dist', 'cli.js'), 'check-run', '--json', broken], {
    encoding: 'utf8',
  });
  assert.equal(cli.status, 1);
  const { severity: _severity, ...problem } = f;
  assert.deepEqual(JSON.parse(cli.stdout), [problem], 'the same problem check-run prints');
});

test('run/check: a missing folder is a finding; a relative path is refused naming runDir', async () => {
  const c = await checkOf(join(dir, 'absent'));
  assert.equal(c.ok, false);
  assert.deepEqual(c.files, []);
  assert.match(c.findings[0]!.message, /no such folder/);
  const refused = await engine.ask('run/check', { runDir: 'relative/run' });
  assert.match(refused.error ?? '', /runDir/);
});
