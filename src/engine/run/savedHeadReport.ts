/**
 * The newest heads report saved beside a run (`heads-report-step-N.json`, docs/RUN_FOLDER.md): the
 * highest N, at most a given step when one is given, whose file reads whole and passes its check.
 * The run report and the debugger's Variables (heads/saved) show its importance.
 */
import { join } from 'node:path';
import { checkHeadReport, HEAD_REPORT_JSON, type HeadReport } from '../../protocol/heads';
import { readJsonFile } from '../io/json';
import { folderEntries } from '../io/regularFile';

export function savedHeadReport(runDir: string, atMost = Infinity): HeadReport | null {
  const files = folderEntries(runDir)
    .map((f) => ({ f, step: Number(HEAD_REPORT_JSON.exec(f)?.[1] ?? NaN) }))
    .filter((x) => Number.isInteger(x.step) && x.step <= atMost)
    .sort((a, b) => b.step - a.step);
  for (const { f } of files) {
    try {
      const report = readJsonFile(join(runDir, f));
      if (!checkHeadReport(report, f)) return report as HeadReport;
    } catch {
      // a report that does not read is skipped, as one that fails its check
    }
  }
  return null;
}
