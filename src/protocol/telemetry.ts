/**
 * Telemetry rows and health-check events as both processes and the panels see them (the lines of
 * telemetry.jsonl and events.jsonl: docs/RUN_FOLDER.md, docs/TELEMETRY.md).
 */
import { type Check, arrayOf, isFiniteNumber, isIndex, isString, nullable, object, oneOf, optional } from './check';

/** The built-in health checks (docs/TELEMETRY.md). */
export const HEALTH_CHECKS = [
  'nonfinite',
  'loss_spike',
  'entropy_collapse',
  'dead_head',
  'mask_leak',
  'padding_leak',
  'divergence',
] as const;
/** Every check an event may name: the health checks and `watch`, the run's own conditions (training.watch). */
export const CHECKS = [...HEALTH_CHECKS, 'watch'] as const;
export type CheckName = (typeof CHECKS)[number];
export type CheckMode = 'off' | 'warn' | 'break';

/**
 * What every check does unless the run or the user's setting says otherwise: a non-finite step and
 * the user's own watch conditions stop training; the rest warn.
 */
export const DEFAULT_CHECK_MODES: Record<CheckName, CheckMode> = {
  nonfinite: 'break',
  loss_spike: 'warn',
  entropy_collapse: 'warn',
  dead_head: 'warn',
  mask_leak: 'warn',
  padding_leak: 'warn',
  divergence: 'warn',
  watch: 'break', // the user's own conditions (training.watch): breakpoints unless set otherwise
};

/** Per-head statistics of the probe batch at one step. */
export interface TelemetryRow {
  step: number;
  /** Probe pairs the statistics are averaged over. */
  pairs: number;
  /** `kind:layer.head`, kind-major. */
  heads: string[];
  /** One array per statistic, in `heads` order; null where undefined for that head. */
  stats: Record<string, (number | null)[]>;
}

/** A health check's finding. */
export interface Finding {
  step: number;
  check: CheckName;
  /** What was seen, without the head (a field of its own). */
  message: string;
  /** `kind:layer.head`, when a head is to blame. */
  head?: string;
  value?: number;
}

/** A finding in one line, as every view and the CLI show it: `step 5 · entropy_collapse · cross:0.1: …`. */
export function describeFinding(f: Finding): string {
  return `step ${f.step} · ${f.check}${f.head ? ` · ${f.head}` : ''}: ${f.message}`;
}

/** A line of events.jsonl: a finding, as a warning or a breakpoint. */
export interface RunEvent extends Finding {
  severity: 'warning' | 'breakpoint';
}

const isStatValues: Check<TelemetryRow['stats']> = (v, path) => {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return `${path} must be an object of arrays`;
  for (const [k, xs] of Object.entries(v)) {
    const why = arrayOf(nullable(isFiniteNumber))(xs, `${path}.${k}`);
    if (why) return why;
  }
  return undefined;
};

export const checkTelemetryRow: Check<TelemetryRow> = (v, path) => {
  const why = object<TelemetryRow>({ step: isIndex, pairs: isIndex, heads: arrayOf(isString), stats: isStatValues })(
    v,
    path,
  );
  if (why) return why;
  const r = v as TelemetryRow;
  for (const [k, xs] of Object.entries(r.stats))
    if (xs.length !== r.heads.length) return `${path}.stats.${k} must hold ${r.heads.length} values, got ${xs.length}`;
  return undefined;
};

export const checkRunEvent: Check<RunEvent> = object({
  step: isIndex,
  check: oneOf(CHECKS),
  message: isString,
  head: optional(isString),
  value: optional(isFiniteNumber),
  severity: oneOf(['warning', 'breakpoint']),
});
