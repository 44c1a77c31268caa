/**
 * What a run's report shows, read from its folder (protocol/report.ts `RunReportData`): the header,
 * the metrics rows and planned schedule, the telemetry and findings (as run/open reads them, so the
 * report shows what the panels show), the chosen snapshots' probe pairs, and the newest head report
 * the extension saved beside the run (`heads-report-step-N.json`). Maps larger than THUMB_CELLS a
 * side are max-pooled as the wire pools long inputs; a report of every snapshot that would pass
 * WEIGHT_BUDGET keeps every k-th snapshot; the report's notes say both. A beam tree given with the
 * request (the Beam Tree panel's, checked by report/write's params) is embedded as it came; one of
 * another run folder is noted.
 */
import { existsSync } from 'node:fs';
import { basename, resolve } from 'node:path';
import { type Pool, THUMB_CELLS, blockFor, maxPoolBlocks, pooledCells, poolCaption } from '../../algorithms/pool';
import type {
  ReportHeader,
  ReportMaps,
  ReportSnapshot,
  ReportWriteParams,
  ReportWriteResult,
  RunReportData,
} from '../../protocol/report';
import { float32ToBase64 } from '../../protocol/wire';
import type { AttentionMaps } from '../../protocol/attention';
import type { BeamTreeView } from '../../protocol/beamTree';
import type { DataSpec } from '../data/dataset';
import { checkOutputFile } from '../io/outputFile';
import { reportAssets, reportHtml, writeReportFile } from '../report/html';
import { firstPoll } from '../run/follow';
import { RunDir } from '../run/runDir';
import { savedHeadReport } from '../run/savedHeadReport';
import type { TrainingSettings } from '../run/settings';
import { runSummary } from './convert';

/** Weights (float32 values) a report of every snapshot holds at most: 3.5 M, 4.7 MB of base64. */
export const WEIGHT_BUDGET = 3_500_000;

export interface CollectOptions {
  /** Snapshot steps to include (default every one, thinned to WEIGHT_BUDGET). */
  steps?: number[];
  /** Probe pairs to include (default [0]). */
  pairs?: number[];
  now?: Date;
  /** Weights a report of every snapshot holds at most (default WEIGHT_BUDGET). */
  budget?: number;
  /** A beam search tree to show (checked already). */
  beam?: BeamTreeView;
}

/**
 * report/write and the CLI's `report`: the report of `runDir` written whole to `out`. The output
 * is checked first (`flag` names it in errors: `--out` or `out`), the run read, then the file written.
 */
export function writeRunReport(p: ReportWriteParams, flag = 'out'): ReportWriteResult {
  const target = checkOutputFile(p.out, p.force ?? false, flag);
  const data = collectReport(p.runDir, {
    ...(p.steps ? { steps: p.steps } : {}),
    ...(p.pairs ? { pairs: p.pairs } : {}),
    ...(p.beam ? { beam: p.beam } : {}),
  });
  const bytes = writeReportFile(target, reportHtml(data, reportAssets()));
  return { out: p.out, bytes, steps: [...new Set(data.snapshots.map((s) => s.step))] };
}

/** The report's data of `runDir`; errors name the folder and what is wrong with it. */
export function collectReport(runDir: string, o: CollectOptions = {}): RunReportData {
  const run = new RunDir(runDir);
  if (!existsSync(runDir)) throw new Error(`${runDir}: no such folder; name a run folder (one with config.json)`);
  if (!run.exists()) throw new Error(`${runDir}: not a run folder (no config.json); name a run folder`);
  const { model, raw } = run.readConfig();
  const { rows, telemetry, events, follow } = firstPoll(runDir);
  const settings = (raw.training ?? {}) as Partial<TrainingSettings>;
  const step = rows.length ? rows[rows.length - 1]!.step : 0;
  const summary = runSummary(run, model, settings, raw.data as DataSpec | undefined, step, false);
  const notes: string[] = [];
  const all = run.snapshotSteps();
  const missing = (o.steps ?? []).filter((s) => !all.includes(s));
  if (missing.length)
    throw new Error(`${runDir}: no snapshot at step ${missing.join(', ')}; its snapshots are at ${stepsText(all)}`);
  const pairs = o.pairs?.length ? o.pairs : [0];
  let steps = o.steps ? all.filter((s) => o.steps!.includes(s)) : all;
  const perStep = steps.map((s) => snapshotOf(run, s, pairs)); // [step][pair]
  const pooled = perStep
    .flat()
    .flatMap((s) => s.maps)
    .find((m) => m.pool);
  if (pooled) notes.push(`Maps longer than ${THUMB_CELLS} tokens a side are max-pooled (${poolCaption(pooled.pool)}).`);
  let kept = perStep;
  const size = (m: ReportMaps) => m.shape.reduce((a, b) => a * b, 1);
  const weights = perStep.flat().reduce((n, s) => n + s.maps.reduce((w, m) => w + size(m), 0), 0);
  const budget = o.budget ?? WEIGHT_BUDGET;
  if (!o.steps && weights > budget) {
    const every = Math.ceil(weights / budget);
    kept = perStep.filter((_, i) => i % every === 0 || i === perStep.length - 1);
    steps = kept.map((s) => s[0]!.step);
    notes.push(
      `One snapshot in ${every} of the run's ${all.length} (${steps.length} kept, the last among them) to keep the file small; ` +
        'choose the steps to include to see others.',
    );
  }
  if (o.steps) notes.push(`Snapshots at the ${steps.length} chosen steps of ${all.length}.`);
  if (pairs.length !== 1 || pairs[0] !== 0) notes.push(`Probe pairs ${pairs.join(', ')}.`);
  if (o.beam && resolve(o.beam.runDir) !== resolve(runDir))
    notes.push(`The beam tree was searched in another run folder, ${o.beam.runDir}.`);
  const header: ReportHeader = {
    run: basename(runDir),
    runDir,
    config: configOf(raw),
    data: summary.data,
    step,
    totalSteps: summary.totalSteps,
    backend: typeof raw.backend === 'string' ? raw.backend : null,
    state: follow.state,
    started: rows.length ? startedAt(run) : null,
    lastWrite: follow.lastWrite > 0 ? new Date(follow.lastWrite).toISOString() : null,
    written: (o.now ?? new Date()).toISOString(),
  };
  const schedule = summary.schedule;
  return {
    v: 1,
    header,
    rows,
    schedule,
    telemetry,
    events,
    snapshots: kept.flat(),
    snapshotSteps: all,
    heads: savedHeadReport(run.path),
    beam: o.beam ?? null,
    notes,
  };
}

const stepsText = (steps: number[]): string =>
  steps.length === 0
    ? 'none'
    : steps.length > 12
      ? `${steps.slice(0, 6).join(', ')} … ${steps.at(-1)}`
      : steps.join(', ');

/** One snapshot's chosen pairs; a pair the snapshot lacks is named with how many it holds. */
function snapshotOf(run: RunDir, step: number, pairs: number[]): ReportSnapshot[] {
  const s = run.readSnapshot(step);
  return pairs.map((pair) => {
    const p = s.pairs[pair];
    if (!p)
      throw new Error(`${run.path}: the snapshot of step ${step} holds ${s.pairs.length} pair(s); no pair ${pair}`);
    return { step, pair, srcTokens: p.src, tgtTokens: p.tgt, maps: p.maps.map(mapsOf) };
  });
}

/** A kind's maps, max-pooled to at most THUMB_CELLS a side, as base64 float32. */
function mapsOf(m: AttentionMaps): ReportMaps {
  const [layers, heads, q, k] = m.shape;
  if (q <= THUMB_CELLS && k <= THUMB_CELLS)
    return { kind: m.kind, shape: [...m.shape], weights: float32ToBase64(m.weights) };
  const pool: Pool = { rows: blockFor(q, THUMB_CELLS), cols: blockFor(k, THUMB_CELLS) };
  const [pq, pk] = [pooledCells(q, pool.rows), pooledCells(k, pool.cols)];
  const out = new Float32Array(layers * heads * pq * pk);
  for (let i = 0; i < layers * heads; i++)
    maxPoolBlocks(m.weights, q, k, pool.rows, pool.cols, out, i * q * k, i * pq * pk);
  return { kind: m.kind, shape: [layers, heads, pq, pk], pool, weights: float32ToBase64(out) };
}

/** config.json's model shape and training recipe, flat: the header's table. */
function configOf(raw: Record<string, unknown>): Record<string, string | number | boolean> {
  const out: Record<string, string | number | boolean> = {};
  const put = (o: Record<string, unknown>, prefix = '') => {
    for (const [k, v] of Object.entries(o))
      if (typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean') out[prefix + k] = v;
  };
  put(raw);
  if (raw.training && typeof raw.training === 'object') put(raw.training as Record<string, unknown>);
  return out;
}

/** When the first metrics row was written (its `time`), if the row says. */
function startedAt(run: RunDir): string | null {
  const t = run.readMetrics()[0]?.time;
  return typeof t === 'number' && Number.isFinite(t) ? new Date(t).toISOString() : null;
}
