/**
 * What the debugger's views show of a paused run: one thread named after the run; a call stack of
 * the current step over the encoder's and the decoder's layers; scopes "Step" (the newest metrics
 * row) and one per layer whose variables are its heads (by their one name, `cross:1.0`), each
 * expanding to whatever statistics the newest telemetry row holds for it (the attention's, the
 * gradient's and each projection's norms) and its importance where a saved heads report gives one.
 */
import type { DebugProtocol } from '@vscode/debugprotocol';
import type { MetricRow } from '../protocol/metrics';
import type { TelemetryRow } from '../protocol/telemetry';
import type { ModelShape } from './breakpoints';
import { stepLine, stepsSource } from './steps';

/** A paused run as the views see it. */
export interface RunView {
  name: string;
  step: number;
  /** The model's shape, known once the run exists. */
  model?: ModelShape;
  /** The newest metrics row (none before the first step). */
  metrics?: MetricRow;
  /** The newest telemetry row (every telemetry_every steps). */
  telemetry?: TelemetryRow;
  /** I_h by head id, from the newest heads report saved at or before the step, when there is one. */
  importance?: { step: number; heads: Record<string, number> };
}

export const THREAD_ID = 1;
const STEP_FRAME = 1;
/** Layer frames are 2 + the layer's index (encoder layers, then decoder layers). */
const LAYER_FRAME = 2;
const STEP_SCOPE = 1;
/** Layer scopes are 10 + the layer's index; heads 10,000 + their index in the telemetry row. */
const LAYER_SCOPE = 10;
const HEAD_VARIABLES = 10_000;
/** A head's attention map (opened in the extension's head inspector): 20,000 + its index. */
const MAP_VARIABLES = 20_000;

interface Layer {
  name: string;
  /** Head-id prefixes of the layer's attentions: `encoder_self:0.`, or `decoder_self:1.` and `cross:1.`. */
  prefixes: string[];
}

function layers(m: ModelShape | undefined): Layer[] {
  if (!m) return [];
  const enc = Array.from({ length: m.encoderLayers }, (_, l) => ({
    name: `encoder layer ${l}`,
    prefixes: [`encoder_self:${l}.`],
  }));
  const dec = Array.from({ length: m.decoderLayers }, (_, l) => ({
    name: `decoder layer ${l}`,
    prefixes: [`decoder_self:${l}.`, `cross:${l}.`],
  }));
  return [...enc, ...dec];
}

export function threads(run: RunView): DebugProtocol.Thread[] {
  return [{ id: THREAD_ID, name: run.name }];
}

/** The step's frame, then one per layer, each on the step's line of the run's steps source (steps.ts; 1-based). */
export function stackFrames(run: RunView): DebugProtocol.StackFrame[] {
  const at = { source: stepsSource(run.name), line: stepLine(run.step), column: 1 };
  return [
    { id: STEP_FRAME, name: `step ${run.step}`, ...at },
    ...layers(run.model).map((layer, i) => ({ id: LAYER_FRAME + i, name: layer.name, ...at })),
  ];
}

/** The top frame shows the step and every layer; a layer's frame, its layer and the step. */
export function scopes(run: RunView, frameId: number): DebugProtocol.Scope[] {
  const at = run.telemetry ? ` (telemetry of step ${run.telemetry.step})` : ' (no telemetry yet)';
  const all = layers(run.model).map((layer, i) => ({
    name: `${layer.name}${at}`,
    variablesReference: LAYER_SCOPE + i,
    expensive: false,
  }));
  const step = { name: 'Step', variablesReference: STEP_SCOPE, expensive: false };
  return frameId === STEP_FRAME ? [step, ...all] : [...all.filter((_, i) => LAYER_FRAME + i === frameId), step];
}

const value = (x: number | null | undefined): string => (x === null || x === undefined ? 'none' : String(x));

export function variables(run: RunView, ref: number): DebugProtocol.Variable[] {
  if (ref === STEP_SCOPE) {
    const m = run.metrics;
    return [
      { name: 'step', value: String(run.step), variablesReference: 0 },
      { name: 'loss', value: value(m?.loss), variablesReference: 0 },
      { name: 'lr', value: value(m?.lr), variablesReference: 0 },
      { name: 'grad_norm', value: value(m?.gradNorm), variablesReference: 0 },
      { name: 'tokens_per_sec', value: value(m?.tokensPerSec), variablesReference: 0 },
    ];
  }
  const row = run.telemetry;
  if (!row) return [];
  const opened = openedHead(run, ref);
  if (opened) return [{ name: 'shown', value: `in the head inspector, at step ${opened.step}`, variablesReference: 0 }];
  if (ref >= HEAD_VARIABLES) {
    const k = ref - HEAD_VARIABLES;
    const map = {
      name: 'attention (probe pair)',
      value: `expand to open ${row.heads[k]} at step ${row.step} in the head inspector`,
      variablesReference: MAP_VARIABLES + k,
    };
    const stats = Object.entries(row.stats).map(([stat, xs]) => ({
      name: stat,
      value: value(xs[k]),
      variablesReference: 0,
    }));
    const importance = run.importance?.heads[row.heads[k]!];
    const known =
      importance === undefined
        ? []
        : [
            {
              name: 'importance',
              value: `${importance} (heads report of step ${run.importance!.step})`,
              variablesReference: 0,
            },
          ];
    return [...stats, ...known, map];
  }
  const layer = layers(run.model)[ref - LAYER_SCOPE];
  if (!layer) return [];
  return row.heads.flatMap((id, k) =>
    layer.prefixes.some((p) => id.startsWith(p))
      ? [{ name: id, value: headSummary(row, k), variablesReference: HEAD_VARIABLES + k }]
      : [],
  );
}

/** A head's line in the Variables view: its entropy and confidence, when the row holds them. */
function headSummary(row: TelemetryRow, k: number): string {
  return ['entropy', 'confidence']
    .filter((s) => row.stats[s])
    .map((s) => `${s} ${value(row.stats[s]![k])}`)
    .join(', ');
}

/** The data id of a head's statistic shown in the Variables view (`cross:0.1.entropy`), if `ref` holds a head's. */
export function statOf(run: RunView, ref: number, name: string): { dataId: string; value: number | null } | undefined {
  const row = run.telemetry;
  const k = ref - HEAD_VARIABLES;
  const values = row?.stats[name];
  if (!row || k < 0 || k >= row.heads.length || !values) return undefined;
  return { dataId: `${row.heads[k]}.${name}`, value: values[k] ?? null };
}

/** The head whose attention map `ref` is, and the telemetry step it is shown at. */
export function openedHead(run: RunView, ref: number): { head: string; step: number } | undefined {
  const row = run.telemetry;
  const k = ref - MAP_VARIABLES;
  if (!row || k < 0 || k >= row.heads.length) return undefined;
  return { head: row.heads[k]!, step: row.step };
}
