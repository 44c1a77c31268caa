/**
 * The Beam Tree's messages (webview/beam/page.ts ↔ panels/beam/panel.ts): its page is sent
 * only states; it asks for a node's attention (`beamNode`), which its own panel answers with a
 * state showing that node.
 */
import { isIndex, object } from '../check';
import { type BeamState, checkStateOf } from '../panelState';
import { pageProtocol, type StateMsg, type Versioned } from '../webview';

/** The user clicked a node of the beam tree: show its prefix's attention. */
export interface BeamNodeMsg extends Versioned {
  type: 'beamNode';
  node: number;
}

export type BeamToPage = StateMsg<BeamState>;
export type BeamFromPage = BeamNodeMsg;

export const beamPage = pageProtocol<'beam', BeamToPage, BeamFromPage>(
  'beam',
  checkStateOf('beam'),
  {},
  {
    beamNode: object({ node: isIndex }),
  },
);
