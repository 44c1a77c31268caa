/**
 * extensionTestsPath: VS Code's extension host loads this file and awaits run(). Bundled by
 * scripts/test-vscode.mjs into out/vscode/index.js. Each test file registers its tests on import:
 * add new ones to the list below.
 */
import { runAll } from './harness';
import './extension.test';
import './settings.test';
import './malformed.test';
import './engine.test';
import './training.test';
import './restart.test';
import './selection.test';
import './health.test';
import './newcomer.test';
import './pickers.test';
import './follow.test';
import './fork.test';
import './demo.test';
import './labels.test';
import './layout.test';
import './headNumbering.test';
import './runStates.test';
import './smallThings.test';
import './reports.test';
import './valueWeighted.test';
import './report.test';
import './htmlExport.test';
import './importance.test';
import './globalView.test';
import './reportPanels.test';
import './roles.test';
// Last: its run lands in the workspace's own runs/ folder, which the Runs view shows by default.
import './debugger.test';

export async function run(): Promise<void> {
  const { passed, failed } = await runAll();
  if (failed > 0 || passed === 0) throw new Error(`${failed} of ${passed + failed} integration tests failed`);
}
