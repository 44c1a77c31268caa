// Webview tests in a real browser (headless Debian Chromium): each panel's page as VS Code serves
// it, fed protocol messages, checked as drawn (test/webview/README.md).
//   node test/webview/browser/index.mjs      WEBVIEW_TEST_GREP=<text> runs the tests whose name contains it
import './panels.mjs';
import './attention.mjs';
import './long.mjs';
import './dashboard.mjs';
import './head.mjs';
import './slider.mjs';
import './firstDraw.mjs';
import './layout.mjs';
import './selection.mjs';
import './telemetry.mjs';
import './beam.mjs';
import './newcomer.mjs';
import './aggregate.mjs';
import './compare.mjs';
import './headView.mjs';
import './labels.mjs';
import './scriptGuard.mjs';
import './headNumbering.mjs';
import './charts.mjs';
import './valueWeighted.mjs';
import './report.mjs';
import './htmlExport.mjs';
import './importance.mjs';
import './ablations.mjs';
import './runCheck.mjs';
import './global.mjs';
import './globalKey.mjs';
import './roles.mjs';
import { runAll } from './harness.mjs';

await runAll();
