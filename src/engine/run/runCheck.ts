/**
 * run/check's answer: a run folder checked against its format (checkFolder.ts, what `check-run`
 * prints), each problem a finding with its severity, and the files the check read.
 */
import { RUN_CHECK_MAX_FINDINGS, type RunCheck } from '../../protocol/runCheck';
import { checkRunFolder } from './checkFolder';

export function checkRunAt(runDir: string): RunCheck {
  const files: string[] = [];
  const problems = checkRunFolder(runDir, files);
  return {
    runDir,
    files,
    ok: problems.length === 0,
    findings: problems.slice(0, RUN_CHECK_MAX_FINDINGS).map((p) => ({ ...p, severity: 'error' as const })),
    omitted: Math.max(0, problems.length - RUN_CHECK_MAX_FINDINGS),
  };
}
