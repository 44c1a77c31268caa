/**
 * The debugger's breakpoints in training terms: a function breakpoint is a step (`step 1200`: pause
 * after that step) or a watch condition over telemetry (`cross:1.*.entropy < 0.2`, parsed by the
 * engine's own parser, src/engine/telemetry/watch.ts; a breakpoint's `condition` joins it with &&),
 * a data breakpoint on a head's statistic is a watch condition on it, and the exception breakpoint
 * filters are the health checks, on where their default mode breaks.
 */
import type { DebugProtocol } from '@vscode/debugprotocol';
import { ATTENTION_KINDS } from '../protocol/attention';
import { type CheckMode, DEFAULT_CHECK_MODES, HEALTH_CHECKS } from '../protocol/telemetry';
import { HEAD_STATS, headIds } from '../engine/telemetry/telemetry';
import { parseWatch } from '../engine/telemetry/watch';

/** One function breakpoint, as the adapter keeps it. */
export type FunctionBreakpoint =
  | { id: number; step: number }
  | { id: number; watch: string }
  | { id: number; error: string };

/** The model's heads (from the run's summary), or undefined before the run exists. */
export interface ModelShape {
  encoderLayers: number;
  decoderLayers: number;
  heads: number;
}

/** Before the run exists its heads are unknown: a condition is checked against these, the engine checks the rest. */
const ANY_MODEL: ModelShape = { encoderLayers: 64, decoderLayers: 64, heads: 64 };

/** The model's head ids, kind-major as telemetry rows hold them. */
export function modelHeads(m: ModelShape): string[] {
  const layers = Object.fromEntries(
    ATTENTION_KINDS.map((k) => [k, k === 'encoder_self' ? m.encoderLayers : m.decoderLayers]),
  ) as Record<(typeof ATTENTION_KINDS)[number], number>;
  return headIds(layers, m.heads);
}

/** Reads one function breakpoint: `step N`, or a watch condition that parses against the model. */
export function readFunctionBreakpoint(
  id: number,
  bp: DebugProtocol.FunctionBreakpoint,
  model: ModelShape | undefined,
): FunctionBreakpoint {
  const name = bp.name.trim();
  const step = /^step\s+(\d+)$/.exec(name);
  if (step) return { id, step: Number(step[1]) };
  const source = bp.condition?.trim() ? `(${name}) && (${bp.condition.trim()})` : name;
  try {
    parseWatch(source, modelHeads(model ?? ANY_MODEL), HEAD_STATS);
    return { id, watch: source };
  } catch (err) {
    return { id, error: (err as Error).message };
  }
}

/** The relative move of a statistic that a data breakpoint without a condition breaks on. */
export const DATA_CHANGE = 0.1;

/**
 * Reads one data breakpoint on a head's statistic (`dataId` `cross:0.1.entropy`, from the
 * Variables view's *Break on Value Change*) as a watch condition: its `condition` when it has one
 * (`< 0.2` compares the statistic; any other expression is joined with &&), else a move of more
 * than DATA_CHANGE of `value`, the statistic where it was set.
 */
export function readDataBreakpoint(
  id: number,
  bp: DebugProtocol.DataBreakpoint,
  value: number | null | undefined,
  model: ModelShape | undefined,
): FunctionBreakpoint {
  const at = bp.dataId;
  const condition = bp.condition?.trim() ?? '';
  let source: string;
  if (/^(<=|>=|==|!=|<|>)/.test(condition)) source = `${at} ${condition}`;
  else if (value === null || value === undefined)
    return { id, error: `${at} has no value at this row: give the breakpoint a condition (e.g. "< 0.2")` };
  else {
    const d = Math.max(Math.abs(value) * DATA_CHANGE, 1e-6);
    const num = (x: number): string => (x < 0 ? `(0 - ${Number((-x).toPrecision(6))})` : `${Number(x.toPrecision(6))}`);
    const moved = `${at} < ${num(value - d)} || ${at} > ${num(value + d)}`;
    source = condition ? `(${moved}) && (${condition})` : moved;
  }
  return readFunctionBreakpoint(id, { name: source }, model);
}

/** What the client is told of a breakpoint. */
export function shown(bp: FunctionBreakpoint): DebugProtocol.Breakpoint {
  return 'error' in bp ? { id: bp.id, verified: false, message: bp.error } : { id: bp.id, verified: true };
}

/** The health checks as exception breakpoint filters, on by default where the check's default mode breaks. */
export const EXCEPTION_FILTERS: DebugProtocol.ExceptionBreakpointsFilter[] = HEALTH_CHECKS.map((check) => ({
  filter: check,
  label: check,
  description: `pause when the ${check} health check fires (docs/TELEMETRY.md)`,
  default: DEFAULT_CHECK_MODES[check] === 'break',
}));

/** The checks' modes for the engine: a filter that is on breaks, one that is off warns (as the checks do by default). */
export function checkModes(filters: readonly string[]): Record<(typeof HEALTH_CHECKS)[number], CheckMode> {
  return Object.fromEntries(HEALTH_CHECKS.map((c) => [c, filters.includes(c) ? 'break' : 'warn'])) as Record<
    (typeof HEALTH_CHECKS)[number],
    CheckMode
  >;
}
