/**
 * The debug adapter's process (dist/debugAdapter.js): a training run as VS Code's debugger sees it
 * (session.ts), spoken to in the Debug Adapter Protocol on stdin and stdout. It runs the engine
 * beside it in the same folder (dist/cli.js serve) and never imports vscode or tfjs.
 */
import { join } from 'node:path';
import { TrainingDebugSession } from './session';

class Session extends TrainingDebugSession {
  constructor() {
    super(join(__dirname, 'cli.js'));
  }
}

TrainingDebugSession.run(Session);
