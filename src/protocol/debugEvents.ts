/**
 * The debug adapter's custom events to the extension (Debug Adapter Protocol custom events, which
 * VS Code hands the extension as onDidReceiveDebugSessionCustomEvent): what the debugger asks the
 * extension's views to show. Checked where the extension receives them.
 */
import { HEAD_ID_FORM, parseHeadId } from './attention';
import { type Check, isAbsolutePath, isIndex, object } from './check';

/** The debug type of package.json's contributes.debuggers: its sessions' `type`. */
export const DEBUG_TYPE = 'attention-debugger';

/** A head's attention map opened in the Variables view: the head inspector shows it at that step. */
export const OPEN_HEAD = 'attentionDebugger.openHead';

export interface OpenHead {
  runDir: string;
  step: number;
  /** The head's one name, `cross:1.0`. */
  head: string;
}

const isHeadId: Check<string> = (v, path) =>
  typeof v === 'string' && parseHeadId(v) ? undefined : `${path} must be a head such as ${HEAD_ID_FORM}`;

export const checkOpenHead: Check<OpenHead> = object({ runDir: isAbsolutePath, step: isIndex, head: isHeadId });
