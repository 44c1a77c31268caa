/**
 * The newest heads report saved in a run folder (`heads-report-step-N.json`, the highest N that
 * reads and passes its check), for the Head Importance panel. Read when the panel builds its state;
 * kept while the file's name and modification time stay the same.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { checkHeadReport, HEAD_REPORT_JSON, type HeadReport } from '../../../protocol/heads';

let cached: { file: string; mtimeMs: number; report: HeadReport } | undefined;

/** The report and its file, or null when the folder holds none that reads (`log` says why one did not). */
export function newestHeadReport(
  runDir: string,
  log: (line: string) => void,
): { file: string; report: HeadReport } | null {
  let names: string[];
  try {
    names = fs.readdirSync(runDir);
  } catch {
    return null;
  }
  const steps = names
    .map((f) => ({ f, step: Number(HEAD_REPORT_JSON.exec(f)?.[1] ?? NaN) }))
    .filter((x) => Number.isInteger(x.step))
    .sort((a, b) => b.step - a.step);
  for (const { f } of steps) {
    const file = path.join(runDir, f);
    try {
      const mtimeMs = fs.statSync(file).mtimeMs;
      if (cached?.file === file && cached.mtimeMs === mtimeMs) return { file, report: cached.report };
      const report: unknown = JSON.parse(fs.readFileSync(file, 'utf8'));
      const why = checkHeadReport(report, f);
      if (why) throw new Error(why);
      cached = { file, mtimeMs, report: report as HeadReport };
      return { file, report: report as HeadReport };
    } catch (err) {
      log(`importance panel: skipping ${file}: ${(err as Error).message}`);
    }
  }
  return null;
}
