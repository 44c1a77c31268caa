/**
 * The engine's training and inspection service: one training run at a time, in this process,
 * streamed to the client as train/metrics, train/snapshot and train/ended notifications.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { MessageConnection } from 'vscode-jsonrpc/node';
import type { EngineLog } from '../../protocol/engine';
import {
  decode,
  float32ToBase64,
  positional,
  runOpen,
  snapshotsGet,
  trainEnded,
  trainMetrics,
  trainResume,
  trainSnapshot,
  trainStart,
  trainStop,
  type RunSummary,
} from '../../protocol/training';
import type { MetricRow } from '../../protocol/webview';
import { loadCheckpoint, readConfig } from '../checkpoint';
import { EOS } from '../data/specialTokens';
import { translateWithAttention } from '../decode/translate';
import { sinusoidalTable } from '../model/embedding';
import { taskSpec, type DataSpec } from '../data/dataset';
import { RunDir } from '../run/runDir';
import { createRun, openRun, type OpenRun } from '../run/setup';
import { startTrainer } from '../train/start';
import type { Snapshot, Trainer } from '../train/trainer';
import { loadVocabulary } from '../data/vocabulary';
import { runSummary, snapshotToWire, toMetricRow, toWireAttention } from './convert';
import { handle, notify } from './rpc';

interface Active {
  trainer: Trainer;
  opened: OpenRun;
  done: Promise<void>;
}

/** Registers the handlers; returns a shutdown that stops a running training with a checkpoint. */
export function registerTrainingHandlers(
  conn: MessageConnection,
  ensureBackend: () => Promise<string>,
  log: (level: EngineLog['level'], message: string) => void,
): () => Promise<void> {
  let active: Active | null = null;

  /** Starts the loop without awaiting it; metrics are sent in batches at most every 200 ms. */
  function begin(opened: OpenRun, resume: boolean): RunSummary {
    const { trainer, from } = startTrainer(opened, { resume });
    const runDir = opened.run.path;
    let pending: MetricRow[] = [];
    let lastFlush = 0;
    const flush = (): void => {
      if (pending.length) notify(conn, trainMetrics, { runDir, rows: pending });
      pending = [];
      lastFlush = Date.now();
    };
    const done = trainer
      .train({
        onStep: (row) => {
          const m = toMetricRow(row);
          if (m) pending.push(m);
          if (Date.now() - lastFlush > 200 || row.val_loss !== undefined) flush();
        },
        onSnapshot: (s: Snapshot) => notify(conn, trainSnapshot, { runDir, attention: snapshotToWire(s) }),
      })
      .then(
        (step) => {
          flush();
          notify(conn, trainEnded, { runDir, step, reason: step >= opened.settings.steps ? 'completed' : 'stopped' });
        },
        (err: Error) => {
          flush();
          log('error', `training ${runDir} failed: ${err.message}`);
          notify(conn, trainEnded, { runDir, step: trainer.currentStep, reason: 'failed', message: err.message });
        },
      )
      .finally(() => {
        trainer.dispose();
        active = null;
      });
    active = { trainer, opened, done };
    log('info', `${resume ? `resuming ${runDir} at step ${from}` : `training ${runDir}`}: ${opened.data.summary}`);
    return runSummary(opened.run, opened.config, opened.settings, opened.dataSpec, from, true);
  }

  const refuseIfBusy = (): void => {
    if (active) throw new Error(`a run is already training (${active.opened.run.path}); stop it first`);
  };

  handle(conn, trainStart, async (p) => {
    refuseIfBusy();
    await ensureBackend();
    const data: DataSpec = p.data.kind === 'task' ? taskSpec(p.data.task) : p.data;
    const overrides = {
      ...(p.steps ? { steps: p.steps } : {}),
      ...(p.snapshotEvery !== undefined ? { snapshot_every: p.snapshotEvery } : {}),
    };
    return begin(createRun({ out: p.runDir, data, config: p.config, overrides }), false);
  });

  handle(conn, trainResume, async (p) => {
    refuseIfBusy();
    await ensureBackend();
    return begin(openRun(p.runDir, p.steps ? { steps: p.steps } : {}), true);
  });

  handle(conn, trainStop, async () => {
    const a = active;
    if (!a) return null;
    a.trainer.stop();
    await a.done;
    return { step: a.trainer.currentStep, runDir: a.opened.run.path };
  });

  handle(conn, runOpen, async ({ runDir }) => {
    const run = new RunDir(runDir);
    const { model, raw } = run.readConfig();
    const rows = run
      .readMetrics()
      .map(toMetricRow)
      .filter((r): r is MetricRow => r !== null);
    const settings = raw.training as OpenRun['settings'];
    const step = rows.length ? rows[rows.length - 1].step : 0;
    const running = active?.opened.run.path === runDir;
    return { summary: runSummary(run, model, settings, raw.data as DataSpec, step, running), rows };
  });

  handle(conn, decode, async (p) => {
    await ensureBackend();
    const run = new RunDir(p.runDir);
    const vocab = loadVocabulary(run.vocabPath);
    const model = loadCheckpoint(p.checkpoint ?? p.runDir);
    try {
      const src = [...vocab.encode(p.text), EOS];
      const t = await translateWithAttention(model, src, {
        ...(p.beam ? { beamSize: p.beam } : {}),
        ...(p.alpha !== undefined ? { alpha: p.alpha } : {}),
      });
      const tgtTokens = vocab.tokens([model.config.bos_id, ...t.tokens]);
      return {
        text: vocab.decode(t.tokens),
        score: t.score,
        logProb: t.logProb,
        attention: toWireAttention(0, vocab.tokens(src), tgtTokens, t.attention),
      };
    } finally {
      model.dispose();
    }
  });

  handle(conn, snapshotsGet, async ({ runDir, steps }) => {
    const run = new RunDir(runDir);
    if (!run.exists()) throw new Error(`${runDir}: not a run folder (no config.json)`);
    const all = run.snapshotSteps();
    const wanted = steps ? all.filter((s) => steps.includes(s)) : all;
    return wanted.map((step) => snapshotToWire(JSON.parse(readFileSync(run.snapshotPath(step), 'utf8')) as Snapshot));
  });

  handle(conn, positional, async (p) => {
    if (p.runDir) {
      const config = readConfig(join(p.runDir, 'config.json'));
      const positions = Math.min(p.positions ?? 128, config.max_len);
      if (config.positional === 'learned') {
        await ensureBackend();
        const model = loadCheckpoint(p.runDir);
        try {
          const rows = (await model.params.get('decoder.pos_embed.weight')!.data()) as Float32Array;
          return {
            shape: [positions, config.d_model] as [number, number],
            data: float32ToBase64(rows.subarray(0, positions * config.d_model)),
            learned: true,
          };
        } finally {
          model.dispose();
        }
      }
      return {
        shape: [positions, config.d_model] as [number, number],
        data: float32ToBase64(sinusoidalTable(positions, config.d_model)),
        learned: false,
      };
    }
    const d = p.dModel ?? 512;
    const positions = p.positions ?? 128;
    if (d % 2 !== 0 || d < 2) throw new Error(`positional params: dModel must be even and ≥ 2, got ${d}`);
    return {
      shape: [positions, d] as [number, number],
      data: float32ToBase64(sinusoidalTable(positions, d)),
      learned: false,
    };
  });

  return async () => {
    const a = active;
    if (!a) return;
    a.trainer.stop();
    await a.done;
  };
}
