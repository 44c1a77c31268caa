/**
 * run/check (the Run Check panel, Check Run Folder): a run folder checked against its format
 * (docs/RUN_FOLDER.md) as `check-run RUN` checks it (src/engine/run/checkFolder.ts). A problem
 * names its file (relative to the run folder), the line of a .jsonl file and the field where they
 * apply; the answer says which files were read and whether the folder is valid.
 */
import {
  type Check,
  arrayOf,
  isAbsolutePath,
  isBoolean,
  isIndex,
  isPositiveInt,
  isString,
  object,
  oneOf,
  optional,
} from './check';

/** One way a run folder departs from its format. */
export interface RunProblem {
  /** Path relative to the run folder ('.' for the folder itself). */
  file: string;
  /** 1-based line of a .jsonl file. */
  line?: number;
  /** The field or tensor at fault. */
  field?: string;
  message: string;
}

/**
 * How bad a finding is. The checker has one grade: every problem makes `check-run` exit 1 and the
 * folder not valid, so each is an `error`; what the format allows is no finding at all.
 */
export const RUN_CHECK_SEVERITIES = ['error'] as const;
export type RunCheckSeverity = (typeof RUN_CHECK_SEVERITIES)[number];

export interface RunFinding extends RunProblem {
  severity: RunCheckSeverity;
}

/** The most findings one answer lists; `omitted` counts those past it (a log broken on every line). */
export const RUN_CHECK_MAX_FINDINGS = 1000;

export interface RunCheck {
  runDir: string;
  /** The files the check read, relative to the run folder, in the order it read them. */
  files: string[];
  /** No findings: a valid run folder. */
  ok: boolean;
  findings: RunFinding[];
  /** Findings left out past RUN_CHECK_MAX_FINDINGS. */
  omitted: number;
}

export interface RunCheckParams {
  runDir: string;
}

export const checkRunCheckParams: Check<RunCheckParams> = object({ runDir: isAbsolutePath });

export const checkRunFinding: Check<RunFinding> = object({
  file: isString,
  line: optional(isPositiveInt),
  field: optional(isString),
  message: isString,
  severity: oneOf(RUN_CHECK_SEVERITIES),
});

export const checkRunCheck: Check<RunCheck> = (v, path) => {
  const why = object<RunCheck>({
    runDir: isString,
    files: arrayOf(isString),
    ok: isBoolean,
    findings: arrayOf(checkRunFinding),
    omitted: isIndex,
  })(v, path);
  if (why) return why;
  const c = v as RunCheck;
  if (c.findings.length > RUN_CHECK_MAX_FINDINGS)
    return `${path}.findings must hold at most ${RUN_CHECK_MAX_FINDINGS}, got ${c.findings.length}`;
  if (c.ok !== (c.findings.length === 0 && c.omitted === 0))
    return `${path}.ok must say whether there are findings (${c.findings.length + c.omitted}), got ${c.ok}`;
  return undefined;
};

/** `file:line: field: message`, as the CLI prints a problem and the Markdown export lists it. */
export function formatProblem(p: RunProblem): string {
  return `${p.file}${p.line !== undefined ? `:${p.line}` : ''}: ${p.field ? `${p.field}: ` : ''}${p.message}`;
}
