/**
 * The Heads panel's messages (webview/heads/page.ts ↔ panels/heads/panel.ts): telemetry rows, the
 * logged metrics (its roles over training draw the loss), findings, the cursor and hover to its
 * page; a head at a step, the cursor (a drop or a lane clicked) and hover from it.
 */
import { arrayOf, object } from '../check';
import { checkStateOf, type HeadsState } from '../panelState';
import { checkTelemetryRow, type TelemetryRow } from '../telemetry';
import { checkMetricsMsg, type MetricsMsg } from './dashboard';
import {
  type CursorFromPageMsg,
  type CursorMsg,
  type EventsMsg,
  type HoverStepMsg,
  type OpenHeadAtMsg,
  pageProtocol,
  sharedChecks,
  type StateMsg,
  type Versioned,
} from '../webview';

/** Telemetry rows of the selected run (appended as training goes on). */
export interface TelemetryMsg extends Versioned {
  type: 'telemetry';
  rows: TelemetryRow[];
}

export type HeadsToPage = StateMsg<HeadsState> | TelemetryMsg | MetricsMsg | EventsMsg | CursorMsg | HoverStepMsg;
export type HeadsFromPage = OpenHeadAtMsg | HoverStepMsg | CursorFromPageMsg;

export const headsPage = pageProtocol<'heads', HeadsToPage, HeadsFromPage>(
  'heads',
  checkStateOf('heads'),
  {
    telemetry: object({ rows: arrayOf(checkTelemetryRow) }),
    metrics: checkMetricsMsg,
    events: sharedChecks.events,
    cursor: sharedChecks.cursor,
    hoverStep: sharedChecks.hoverStep,
  },
  { openHeadAt: sharedChecks.openHeadAt, hoverStep: sharedChecks.hoverStep, cursor: sharedChecks.cursorFromPage },
);
