/**
 * The requests that read runs without training them: run/open (summary and metrics), snapshots/get
 * (the probe's attention history), decode (a sentence at a checkpoint, with its attention) and
 * positional (the encoding of §3.5). Each goes through RunDir, never around it.
 */
import type { MessageConnection } from 'vscode-jsonrpc/node';
import type { MetricRow } from '../../protocol/metrics';
import { decode, positional, runOpen, snapshotsGet } from '../../protocol/training';
import { attentionToWire, matrixToWire } from '../../protocol/wire';
import { checkpointStep, listCheckpoints, loadCheckpoint, resolveCheckpoint } from '../checkpoint';
import type { DataSpec } from '../data/dataset';
import { EOS } from '../data/specialTokens';
import { loadVocabulary } from '../data/vocabulary';
import { translateWithAttention } from '../decode/translate';
import { sinusoidalTable } from '../model/embedding';
import { RunDir } from '../run/runDir';
import type { TrainingSettings } from '../run/settings';
import { runSummary, snapshotAttention, toMetricRow } from './convert';
import { handle } from './rpc';

export function registerInspectionHandlers(
  conn: MessageConnection,
  ensureBackend: () => Promise<string>,
  trainingRun: () => string | undefined,
): void {
  handle(conn, runOpen, async ({ runDir }) => {
    const run = new RunDir(runDir);
    const { model, raw } = run.readConfig();
    const rows = run
      .readMetrics()
      .map(toMetricRow)
      .filter((r): r is MetricRow => r !== null);
    const settings = (raw.training ?? {}) as Partial<TrainingSettings>;
    const step = rows.length ? rows[rows.length - 1].step : (listCheckpoints(runDir).pop()?.step ?? 0);
    const running = trainingRun() === runDir;
    return { summary: runSummary(run, model, settings, raw.data as DataSpec | undefined, step, running), rows };
  });

  handle(conn, snapshotsGet, async ({ runDir, steps }) => {
    const run = new RunDir(runDir);
    if (!run.exists()) throw new Error(`${runDir}: not a run folder (no config.json)`);
    const all = run.snapshotSteps();
    const wanted = steps ? all.filter((s) => steps.includes(s)) : all;
    return wanted.map((step) => attentionToWire(snapshotAttention(run, run.readSnapshot(step))));
  });

  handle(conn, decode, async (p) => {
    await ensureBackend();
    const run = new RunDir(p.runDir);
    const vocab = loadVocabulary(run.vocabPath);
    const { weightsPath } = resolveCheckpoint(p.checkpoint ?? p.runDir);
    const model = loadCheckpoint(weightsPath);
    try {
      const src = [...vocab.encode(p.text), EOS];
      const t = await translateWithAttention(model, src, {
        ...(p.beam ? { beamSize: p.beam } : {}),
        ...(p.alpha !== undefined ? { alpha: p.alpha } : {}),
      });
      const source = {
        runDir: p.runDir,
        step: checkpointStep(weightsPath),
        checkpoint: weightsPath,
        input: 'input' as const,
      };
      const attention = {
        source,
        srcTokens: vocab.tokens(src),
        tgtTokens: vocab.tokens([model.config.bos_id, ...t.tokens]),
        maps: t.maps,
      };
      return {
        text: vocab.decode(t.tokens),
        score: t.score,
        logProb: t.logProb,
        attention: attentionToWire(attention),
      };
    } finally {
      model.dispose();
    }
  });

  handle(conn, positional, async (p) => {
    if (p.runDir) {
      const config = new RunDir(p.runDir).readConfig().model;
      const positions = Math.min(p.positions ?? 128, config.max_len);
      const shape: [number, number] = [positions, config.d_model];
      if (config.positional === 'learned') {
        await ensureBackend();
        const model = loadCheckpoint(p.runDir);
        try {
          const rows = (await model.params.get('decoder.pos_embed.weight')!.data()) as Float32Array;
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
