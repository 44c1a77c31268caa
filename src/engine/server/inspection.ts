/**
 * The requests that read runs without training them: run/open (summary and metrics), run/check (the
 * folder against its format, as check-run checks it), snapshots/get
 * (the probe's attention history), attention/get (any pair at any checkpoint, decoded when it has no
 * target; past 256 tokens its maps come max-pooled), attention/block (one head's block of a pooled
 * pair, whole or pooled to 256² at most), heads/scores (one head's query row, each key's score split
 * into its parts), heads/global (one head's queries and keys over the validation split in 2-D), beam/tree (a sentence's beam search with its tree),
 * ablation/effect and ablation/score (what switching heads off does to one input, and to the test
 * split), heads/report (importance and pruning curves), heads/saved (the newest one saved), report/write (the run's HTML report, report.ts)
 * and positional (the encoding of §3.5). Each
 * goes through RunDir, never around it.
 */
import type { MessageConnection } from 'vscode-jsonrpc/node';
import {
  ablationEffect,
  ablationScore,
  attentionBlock,
  attentionGet,
  beamTreeGet,
  headsProgress,
  headsGlobal,
  headsReport,
  headsScores,
  positional,
  reportWrite,
  headsSaved,
  runCheck,
  runOpen,
  runPoll,
  snapshotsGet,
} from '../../protocol/methods';
import { attentionToWire, float32ToBase64, matrixToWire } from '../../protocol/wire';
import { loadCheckpoint } from '../checkpoint';
import type { DataSpec } from '../data/dataset';
import { sinusoidalTable } from '../model/embedding';
import { attentionAt, checkpointOf } from '../inspect/attentionAt';
import { attentionBlockAt } from '../inspect/attentionBlock';
import { headReport } from '../ablate/headReport';
import { ablationEffectAt } from '../ablate/effect';
import { scoreAblation } from '../ablate/score';
import { beamTreeAt } from '../inspect/beamTreeAt';
import { globalViewAt } from '../inspect/globalView';
import { headScoresAt } from '../inspect/headScores';
import { firstPoll, pollRun } from '../run/follow';
import { RunDir } from '../run/runDir';
import { savedHeadReport } from '../run/savedHeadReport';
import { checkOpenedCheckpoint } from '../run/openCheck';
import { checkRunAt } from '../run/runCheck';
import type { TrainingSettings } from '../run/settings';
import { runSummary } from './convert';
import { writeRunReport } from './report';
import { snapshotAttention } from '../run/toWire';
import { handle, notify } from './rpc';

export function registerInspectionHandlers(
  conn: MessageConnection,
  ensureBackend: () => Promise<string>,
  trainingRun: () => string | undefined,
): void {
  handle(conn, runOpen, async ({ runDir, step: asked }) => {
    const run = new RunDir(runDir);
    const { model, raw } = run.readConfig();
    checkOpenedCheckpoint(run, model, asked); // a broken checkpoint is named now, not at the first decode
    // What a follower would have read so far: a later run/poll from its cursor gets what lands next.
    const { rows, telemetry, events, checkpoints, follow } = firstPoll(runDir);
    const settings = (raw.training ?? {}) as Partial<TrainingSettings>;
    const step = rows.length ? rows[rows.length - 1]!.step : (checkpoints[checkpoints.length - 1] ?? 0);
    const running = trainingRun() === runDir;
    const summary = runSummary(run, model, settings, raw.data as DataSpec | undefined, step, running);
    return { summary, rows, telemetry, events, follow };
  });

  handle(conn, runPoll, async ({ runDir, ...cursor }) => pollRun(runDir, cursor));

  handle(conn, snapshotsGet, async ({ runDir, steps }) => {
    const run = new RunDir(runDir);
    if (!run.exists()) throw new Error(`${runDir}: not a run folder (no config.json)`);
    const all = run.snapshotSteps();
    const wanted = steps ? all.filter((s) => steps.includes(s)) : all;
    return wanted.map((step) => attentionToWire(snapshotAttention(run, run.readSnapshot(step))));
  });

  handle(conn, attentionGet, async (p) => {
    await ensureBackend();
    const r = await attentionAt(p.runDir, p.step, p.input, p.beam ?? 4, p.valueWeighted ?? false);
    return { ...r, attention: attentionToWire(r.attention) };
  });

  handle(conn, attentionBlock, async (p) => {
    await ensureBackend();
    const b = await attentionBlockAt(p, () => attentionAt(p.runDir, p.step, p.input));
    return { ...b, weights: float32ToBase64(b.weights) };
  });

  handle(conn, headsScores, async (p) => {
    await ensureBackend();
    return headScoresAt(p.runDir, p.step, p.input, p, p.query, p.beam ?? 4);
  });

  handle(conn, headsGlobal, async (p) => {
    await ensureBackend();
    return globalViewAt(p);
  });

  handle(conn, beamTreeGet, async (p) => {
    await ensureBackend();
    return beamTreeAt(p.runDir, p.step, p.input, p);
  });

  handle(conn, runCheck, async (p) => checkRunAt(p.runDir));

  handle(conn, ablationEffect, async (p) => {
    await ensureBackend();
    return ablationEffectAt(p.runDir, p.step, p.input, p.ablation);
  });

  handle(conn, ablationScore, async (p) => {
    await ensureBackend();
    const checkpoint = checkpointOf(new RunDir(p.runDir), p.step);
    return scoreAblation(p.runDir, checkpoint, p.ablation, p.limit ?? 200);
  });

  handle(conn, headsReport, async (p) => {
    await ensureBackend();
    const checkpoint = checkpointOf(new RunDir(p.runDir), p.step);
    let done = 0;
    return headReport(p.runDir, {
      checkpoint,
      pairs: p.pairs ?? 256,
      limit: p.limit ?? 200,
      seed: p.seed ?? 1,
      decoding: { beamSize: 1 },
      // Two curves of heads + 1 points each (the intact model, then one head more removed at a time).
      onPoint: (_order, _p, heads) =>
        notify(conn, headsProgress, { runDir: p.runDir, done: ++done, total: 2 * (heads + 1) }),
    });
  });

  handle(conn, headsSaved, async (p) => savedHeadReport(p.runDir, p.step));

  handle(conn, reportWrite, async (p) => writeRunReport(p));

  handle(conn, positional, async (p) => {
    if (p.runDir) {
      const config = new RunDir(p.runDir).readConfig().model;
      const positions = Math.min(p.positions ?? 128, config.max_len);
      const shape: [number, number] = [positions, config.d_model];
      if (config.positional === 'learned') {
        await ensureBackend();
        const model = loadCheckpoint(p.runDir);
        try {
          const table = model.layers.positions?.decoder;
          if (!table) throw new Error(`${p.runDir}: learned positions without their parameters`);
          const rows = (await table.data()) as Float32Array;
          return { ...matrixToWire(shape, rows.subarray(0, positions * config.d_model)), learned: true };
        } finally {
          model.dispose();
        }
      }
      return { ...matrixToWire(shape, sinusoidalTable(positions, config.d_model)), learned: false };
    }
    const d = p.dModel ?? 512;
    const positions = p.positions ?? 128;
    if (d % 2 !== 0) throw new Error(`positional params: dModel must be even, got ${d}`);
    return { ...matrixToWire([positions, d], sinusoidalTable(positions, d)), learned: false };
  });
}
