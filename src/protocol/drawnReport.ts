/**
 * What a page reports having drawn, as a person sees it: how the integration tests check a panel.
 * No product message carries it: each page hands its report function to `start` (webview/common.ts),
 * which leaves it on the page for the test harnesses' page hook (test/pageHook/pageHook.js) to call;
 * the hook, its question and its answer exist only under the harnesses.
 */
import type { HeadRef } from './attention';
import type { PanelKind } from './panelState';

/** A cell of an attention map: query row `q`, key column `k` of one head. */
export interface CellRef extends HeadRef {
  q: number;
  k: number;
}

/** What a page drew: its header, what is on screen, and colours of cells asked for. */
export interface DrawnReport {
  /** The header's run, step and input, as shown. */
  run: string;
  step: number | null;
  input: string;
  /** The header's note on who writes the run: `training`, an activity of a followed run, or ''. */
  activity: string;
  /** Attention maps drawn: their kinds and shapes (the attention view: every thumbnail). */
  maps: { kind: string; shape: number[] }[];
  /** The head shown (the inspector). */
  head: HeadRef | null;
  /** The inspector's slider: frames it ranges over. */
  frames: number;
  /** Drawn colour [r, g, b, a] of each cell asked for, null where that cell is not drawn. */
  colors: ([number, number, number, number] | null)[];
  /** Labels drawn over the data: event markers (`check@step`), role labels (`head role`), hover lines. */
  marks: string[];
}

/** The name under which a started page leaves `(cells) => its panel and report` on `window`. */
export const DRAWN_HOOK = 'attentionDebuggerDrawn';

/** What the page hook's function answers: the page's panel and its report. */
export type DrawnOfPage = (cells: CellRef[]) => DrawnReport & { panel: PanelKind };
