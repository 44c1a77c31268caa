/**
 * The debug adapter (dist/debugAdapter.js) as VS Code drives it, for the tests: a DebugClient that
 * has been initialized (its capabilities returned), each stopped once the test file's tests end;
 * and a launch of a micro run with function breakpoints and no exception filters, to its first stop.
 */
import { join } from 'node:path';
import { after } from 'node:test';
import { DebugClient } from '@vscode/debugadapter-testsupport';
import type { DebugProtocol } from '@vscode/debugprotocol';
import { REPO } from '../helpers';

const clients: DebugClient[] = [];
after(async () => {
  for (const dc of clients) await dc.stop().catch(() => undefined);
});

export async function initializedClient(): Promise<{ dc: DebugClient; capabilities: DebugProtocol.Capabilities }> {
  const dc = new DebugClient(process.execPath, join(REPO, 'dist', 'debugAdapter.js'), 'attention-debugger');
  dc.defaultTimeout = 60_000;
  await dc.start();
  clients.push(dc);
  // The event follows the reply, maybe in the same chunk: listen before asking
  const initialized = dc.waitForEvent('initialized');
  const info = await dc.initializeRequest({ adapterID: 'attention-debugger', pathFormat: 'path' });
  await initialized;
  return { dc, capabilities: info.body ?? {} };
}

/** Launches `args` with these function breakpoints; resolves with the first stop. */
export async function launchToFirstStop(
  dc: DebugClient,
  breakpoints: DebugProtocol.FunctionBreakpoint[],
  args: Record<string, unknown>,
): Promise<DebugProtocol.StoppedEvent> {
  await dc.setFunctionBreakpointsRequest({ breakpoints });
  await dc.setExceptionBreakpointsRequest({ filters: [] });
  await dc.configurationDoneRequest();
  const first = dc.waitForEvent('stopped');
  await dc.launchRequest(args as DebugProtocol.LaunchRequestArguments);
  return (await first) as DebugProtocol.StoppedEvent;
}
