/**
 * What a whole panel shows: the `state` a page redraws from (after `ready`, on request, and when
 * it is shown again), the header every panel carries, and their checks. The messages that carry
 * them and the smaller updates are in webview.ts; both sides import this file.
 */
import { type Attention, checkAttention, checkHeadRef, type HeadRef } from './attention';
import { type AblationEffect, type AblationRecord, checkAblationEffect, checkAblationRecords } from './ablation';
import { type BeamTreeView, checkBeamTreeView } from './beamTree';
import { checkGlobalView, type GlobalView } from './globalView';
import { checkHeadReport, type HeadReport } from './heads';
import {
  type Check,
  arrayOf,
  isBoolean,
  isFiniteNumber,
  isFloat32Array,
  isIndex,
  isPositiveInt,
  isString,
  nullable,
  object,
  oneOf,
  optional,
  shapeOf,
} from './check';
import { checkMetricRow, checkSchedulePoint, type MetricRow, type SchedulePoint } from './metrics';
import { checkRunCheck, type RunCheck } from './runCheck';
import { RUN_ACTIVITIES, type RunActivity } from './runFolder';
import { checkRunEvent, checkTelemetryRow, type RunEvent, type TelemetryRow } from './telemetry';

export const PANEL_KINDS = [
  'dashboard',
  'attention',
  'head',
  'positional',
  'heads',
  'beam',
  'importance',
  'ablations',
  'runCheck',
  'global',
] as const;
export type PanelKind = (typeof PANEL_KINDS)[number];

/** A positional-encoding matrix, row-major [positions, dModel]. */
export interface PositionalPayload {
  shape: [positions: number, dModel: number];
  values: Float32Array;
}

/**
 * What every panel says it shows, in its header: the selected run, the step its views point at,
 * and the input pair. Sent with every state, so a panel never shows one run under another's name.
 */
export interface ViewHeader {
  runDir: string;
  /** The run folder's name. */
  run: string;
  /** The step views point at (the shared step cursor); null: the newest. */
  step: number | null;
  /** `probe`, or the input's source sentence (attention.ts describeInput). */
  input: string;
  /** The input's target sentence when it gives one (describeTarget); absent: decoded. */
  target?: string;
  /** The run trains now, in this window's engine. */
  live: boolean;
  /** A run another process writes: what its folder says of the writer (protocol/follow.ts). */
  activity?: RunActivity;
  /** Steps of the run's checkpoints, for choosing one. */
  checkpoints: number[];
  /** The run has a vocabulary: text can be typed (otherwise token ids). */
  vocab: boolean;
  /** A fork's origin (config.json `fork`): its parent's folder, the step it left it, and its edits in words. */
  fork?: ForkOrigin;
}
export interface ForkOrigin {
  parent: string;
  step: number;
  /** `frozen cross:1.0; lr × 0.5` (protocol/fork.ts describeForkChanges). */
  edits: string;
}

/** The whole planned learning-rate curve and what the dashboard says about it. */
export interface Schedule {
  totalSteps: number;
  warmupSteps: number;
  dModel: number;
  points: SchedulePoint[];
}

/** Each head's roles (protocol/roles.ts) at some step; heads without a role are left out. */
export interface HeadRoles {
  head: string;
  roles: string[];
}
export const checkHeadRoles = arrayOf(object({ head: isString, roles: arrayOf(isString) }));

/** Another run on the dashboard: its name, folder and metrics. */
export interface OverlayRun {
  run: string;
  runDir: string;
  rows: MetricRow[];
}
export const checkOverlayRun = object({ run: isString, runDir: isString, rows: arrayOf(checkMetricRow) });

export interface DashboardState {
  panel: 'dashboard';
  header: ViewHeader | null;
  rows: MetricRow[];
  /** Other runs drawn with this one (Compare Runs). */
  overlays?: OverlayRun[];
  schedule: Schedule | null;
  cursor: number | null;
  /** Health-check findings: markers on the loss curve and the list of problems. */
  events: RunEvent[];
}
export interface AttentionState {
  panel: 'attention';
  header: ViewHeader | null;
  attention: Attention | null;
  selected: HeadRef | null;
  /** Each head's roles at the attention's step (the newest telemetry row at or before it). */
  roles: HeadRoles[];
  /** What the heads the user switched off do to this input (absent or null: none are off). */
  ablation?: AblationEffect | null;
  /** The views draw value-weighted attention ‖α·vW^O‖ (the maps' `valueWeighted`) instead of the weights. */
  valueWeighted?: boolean;
}
export interface HeadsState {
  panel: 'heads';
  header: ViewHeader | null;
  telemetry: TelemetryRow[];
  /** The logged steps, for the loss its roles over training are drawn under (absent: none). */
  metrics?: MetricRow[];
  events: RunEvent[];
  cursor: number | null;
}
export interface HeadState {
  panel: 'head';
  header: ViewHeader | null;
  head: HeadRef | null;
  /** What the attention view shows: the inspector shows this head of it. */
  attention: Attention | null;
  /** The probe pair's history, oldest first: the slider ranges over it when the input is the probe. */
  snapshots: Attention[];
  /** Loss of each snapshot step, when logged: shown beside the slider. */
  losses: { step: number; loss: number }[];
  cursor: number | null;
  /** The attention view's value-weighted toggle: the inspector draws the norms where the frame holds them. */
  valueWeighted?: boolean;
}
export interface PositionalState {
  panel: 'positional';
  header: ViewHeader | null;
  positional: PositionalPayload | null;
}
/** A sentence's beam search tree, and the attention of the node clicked (teacher-forced on its prefix). */
export interface BeamState {
  panel: 'beam';
  header: ViewHeader | null;
  tree: BeamTreeView | null;
  /** The clicked node and its prefix's attention: decoder input [BOS, …prefix without its last token]. */
  node: { id: number; attention: Attention } | null;
}
/** Head Importance and Pruning: the newest heads report saved in the folder of the run it shows. */
export interface ImportanceState {
  panel: 'importance';
  header: ViewHeader | null;
  /** The run it shows: the selected one, or the one Head Importance last ran on (null: none). */
  runDir: string | null;
  /** That run's newest heads-report-step-N.json (null: none saved yet). */
  report: HeadReport | null;
}
/** Ablation Results: every ablation tried on the run it shows (its folder's ablations.json). */
export interface AblationsState {
  panel: 'ablations';
  header: ViewHeader | null;
  /** The run it shows: the selected one, or the one Ablate Heads last scored (null: none). */
  runDir: string | null;
  /** Its ablations, oldest first. */
  rows: AblationRecord[];
}
/** Run Check: the run folder it shows checked against its format (run/check). */
export interface RunCheckState {
  panel: 'runCheck';
  header: ViewHeader | null;
  /** The run it shows: the selected one, or the one Check Run Folder last checked (null: none). */
  runDir: string | null;
  /** That folder's check (null: not answered yet, or it failed: `error`). */
  check: RunCheck | null;
  /** Why the check could not be made (null: none). */
  error: string | null;
}
/** Global Q/K view: one head's queries and keys over the validation split in 2-D (heads/global). */
export interface GlobalState {
  panel: 'global';
  header: ViewHeader | null;
  /** The run it shows: the selected one, or the one it was opened on (null: none). */
  runDir: string | null;
  /** The head it shows (null: none chosen). */
  head: HeadRef | null;
  /** The engine's answer for that run, head and step (null: not answered yet, or it failed: `error`). */
  view: GlobalView | null;
  /** What is being computed now (null: nothing). */
  busy: string | null;
  error: string | null;
}
export type PanelState =
  | DashboardState
  | AttentionState
  | HeadState
  | PositionalState
  | HeadsState
  | BeamState
  | ImportanceState
  | AblationsState
  | RunCheckState
  | GlobalState;

// ---- checks ----------------------------------------------------------------------------

export const checkPositionalPayload: Check = (v, path) => {
  const why = object({ shape: shapeOf(2), values: isFloat32Array })(v, path);
  if (why) return why;
  const p = v as PositionalPayload;
  const n = p.shape[0] * p.shape[1];
  if (p.values.length !== n)
    return `${path}.values must hold ${n} values (shape ${p.shape.join('×')}), got ${p.values.length}`;
  return undefined;
};

export const checkSchedule = object({
  totalSteps: isPositiveInt,
  warmupSteps: isFiniteNumber,
  dModel: isPositiveInt,
  points: arrayOf(checkSchedulePoint),
});

const checkViewHeader = object({
  runDir: isString,
  run: isString,
  step: nullable(isIndex),
  input: isString,
  target: optional(isString),
  live: isBoolean,
  activity: optional(oneOf(RUN_ACTIVITIES)),
  checkpoints: arrayOf(isIndex),
  vocab: isBoolean,
  fork: optional(object({ parent: isString, step: isIndex, edits: isString })),
});

export const checkPanelState: Check = (v, path) => {
  const why = object({ panel: oneOf(PANEL_KINDS), header: nullable(checkViewHeader) })(v, path);
  if (why) return why;
  switch ((v as PanelState).panel) {
    case 'dashboard':
      return object({
        rows: arrayOf(checkMetricRow),
        schedule: nullable(checkSchedule),
        cursor: nullable(isIndex),
        events: arrayOf(checkRunEvent),
        overlays: optional(arrayOf(checkOverlayRun)),
      })(v, path);
    case 'attention':
      return object({
        attention: nullable(checkAttention),
        selected: nullable(checkHeadRef),
        roles: checkHeadRoles,
        ablation: optional(nullable(checkAblationEffect)),
        valueWeighted: optional(isBoolean),
      })(v, path);
    case 'heads':
      return object({
        telemetry: arrayOf(checkTelemetryRow),
        metrics: optional(arrayOf(checkMetricRow)),
        events: arrayOf(checkRunEvent),
        cursor: nullable(isIndex),
      })(v, path);
    case 'head':
      return object({
        head: nullable(checkHeadRef),
        attention: nullable(checkAttention),
        snapshots: arrayOf(checkAttention),
        losses: arrayOf(object({ step: isIndex, loss: isFiniteNumber })),
        cursor: nullable(isIndex),
        valueWeighted: optional(isBoolean),
      })(v, path);
    case 'positional':
      return object({ positional: nullable(checkPositionalPayload) })(v, path);
    case 'beam':
      return object({
        tree: nullable(checkBeamTreeView),
        node: nullable(object({ id: isIndex, attention: checkAttention })),
      })(v, path);
    case 'importance':
      return object({ runDir: nullable(isString), report: nullable(checkHeadReport) })(v, path);
    case 'ablations':
      return object({ runDir: nullable(isString), rows: checkAblationRecords })(v, path);
    case 'runCheck':
      return object({ runDir: nullable(isString), check: nullable(checkRunCheck), error: nullable(isString) })(v, path);
    case 'global':
      return object({
        runDir: nullable(isString),
        head: nullable(checkHeadRef),
        view: nullable(checkGlobalView),
        busy: nullable(isString),
        error: nullable(isString),
      })(v, path);
  }
};

/** Checks a state as one panel's: its `panel` must be `kind`, then the fields of that panel's state. */
export const checkStateOf =
  (kind: PanelKind): Check =>
  (v, path) =>
    object({ panel: oneOf([kind]) })(v, path) ?? checkPanelState(v, path);
