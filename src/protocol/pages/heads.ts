/**
 * The Heads panel's messages (webview/heads/page.ts ↔ panels/heads/panel.ts): telemetry rows,
 * findings, the cursor and hover to its page; a head at a step and hover from it.
 */
import { arrayOf, object } from '../check';
import { checkStateOf, type HeadsState } from '../panelState';
import { checkTelemetryRow, type TelemetryRow } from '../telemetry';
import {
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

export type HeadsToPage = StateMsg<HeadsState> | TelemetryMsg | EventsMsg | CursorMsg | HoverStepMsg;
export type HeadsFromPage = OpenHeadAtMsg | HoverStepMsg;

export const headsPage = pageProtocol<'heads', HeadsToPage, HeadsFromPage>(
  'heads',
  checkStateOf('heads'),
  {
    telemetry: object({ rows: arrayOf(checkTelemetryRow) }),
    events: sharedChecks.events,
    cursor: sharedChecks.cursor,
    hoverStep: sharedChecks.hoverStep,
  },
  { openHeadAt: sharedChecks.openHeadAt, hoverStep: sharedChecks.hoverStep },
);
