/**
 * The ablations tried on a run, as its folder keeps them (`ablations.json`, docs/RUN_FOLDER.md): read
 * for the Ablation Results panel, and a new score added by Ablate Heads…, the file written whole (a
 * temporary file renamed over it), so a reader never sees half of it and the list survives a reload.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { readJsonFile } from '../../../engine/io/json';
import { ABLATION_RECORDS_KEPT, type AblationRecord, checkAblationRecords } from '../../../protocol/ablation';
import { RUN_FILES } from '../../../protocol/runFolder';
import { saveWhole } from '../saveFile';

const fileOf = (runDir: string) => path.join(runDir, RUN_FILES.ablations);

/** The run's ablations, oldest first ([] when none are saved); throws naming the file when it does not read. */
function readAblations(runDir: string): AblationRecord[] {
  const file = fileOf(runDir);
  if (!fs.existsSync(file)) return [];
  // Read as the engine reads a run's JSON: a regular file within its bound (docs/RUN_FOLDER.md "Limits on reading").
  const raw = readJsonFile(file);
  const why = checkAblationRecords(raw, RUN_FILES.ablations);
  if (why) throw new Error(`${file}: ${why}`);
  return raw as AblationRecord[];
}

/** The run's ablations, oldest first ([] when none are saved or the file does not read: `log` says why). */
export function savedAblations(runDir: string, log: (line: string) => void): AblationRecord[] {
  try {
    return readAblations(runDir);
  } catch (err) {
    log(`ablations panel: skipping ${fileOf(runDir)}: ${(err as Error).message}`);
    return [];
  }
}

/**
 * Adds a score to the ablations of `runDir` (the oldest dropped past ABLATION_RECORDS_KEPT). Throws,
 * writing nothing, when the file there does not read: it is the user's to repair, never overwritten.
 */
export async function saveAblation(runDir: string, record: AblationRecord): Promise<void> {
  const rows = [...readAblations(runDir), record].slice(-ABLATION_RECORDS_KEPT);
  await saveWhole(vscode.Uri.file(fileOf(runDir)), new TextEncoder().encode(`${JSON.stringify(rows)}\n`));
}
