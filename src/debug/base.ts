/**
 * What a debug session of a run shows, whatever moves the run: a launched run the engine trains
 * (session.ts) or a followed one another process writes (attach.ts). It holds the step shown, the
 * newest metrics and telemetry rows, the breakpoints and exception filters, and answers the views
 * (threads, stack, scopes, variables: views.ts), the Debug Console (evaluate.ts), and the stops.
 */
import { basename } from 'node:path';
import {
  DebugSession,
  Event,
  InitializedEvent,
  OutputEvent,
  StoppedEvent,
  TerminatedEvent,
} from '@vscode/debugadapter';
import type { DebugProtocol } from '@vscode/debugprotocol';
import { OPEN_HEAD, type OpenHead } from '../protocol/debugEvents';
import type { MetricRow } from '../protocol/metrics';
import { engineLog, headsSaved } from '../protocol/methods';
import type { TelemetryRow } from '../protocol/telemetry';
import type { RunSummary } from '../protocol/training';
import {
  EXCEPTION_FILTERS,
  type FunctionBreakpoint,
  readDataBreakpoint,
  readFunctionBreakpoint,
  shown,
} from './breakpoints';
import { DebugEngine } from './engine';
import { readLineBreakpoints, STEPS_REFERENCE, stepsText } from './steps';
import { evaluate } from './evaluate';
import type { Replayed } from './rewind';
import { openedHead, type RunView, scopes, stackFrames, statOf, THREAD_ID, threads, variables } from './views';

export abstract class RunDebugSession extends DebugSession {
  protected engine?: DebugEngine;
  /** The run folder, once launch or attach named it. */
  protected runDir?: string;
  protected summary?: RunSummary;
  /** The newest step of the run (trained here, or logged by its writer). */
  protected step = 0;
  protected metrics?: MetricRow;
  protected telemetry?: TelemetryRow;
  /** The function, data and line breakpoints (each kind as the client last set it). */
  protected breakpoints: FunctionBreakpoint[] = [];
  private functionBreakpoints: FunctionBreakpoint[] = [];
  private dataBreakpoints: FunctionBreakpoint[] = [];
  private lineBreakpoints: FunctionBreakpoint[] = [];
  protected nextId = 1;
  protected filters = EXCEPTION_FILTERS.filter((f) => f.default).map((f) => f.filter);
  protected ended = false;
  /** An earlier step shown (replayed, or read from the logs) while the run stands at `step`. */
  protected viewing?: Replayed;
  /** The heads report's importance for the step shown (heads/saved), asked once per step. */
  private importance?: { at: number; known: RunView['importance'] };
  protected configured!: () => void;
  protected readonly configuration = new Promise<void>((resolve) => (this.configured = resolve));

  constructor(protected readonly cliPath: string) {
    super();
    // Lines are steps (steps.ts), counted from 1 as steps are.
    this.setDebuggerLinesStartAt1(true);
    this.setDebuggerColumnsStartAt1(true);
  }

  /** Starts the engine beside the adapter (`serve`, with `backend` when given); its exit ends the session. */
  protected startEngine(backend: string | undefined): DebugEngine {
    const engine = new DebugEngine(
      this.cliPath,
      backend ? ['--backend', backend] : [],
      (line) => this.print(`[engine] ${line}`),
      (code) => this.finish(`the engine exited (code ${code})`),
    );
    engine.onNotification(engineLog, (p) => this.print(`[engine ${p.level}] ${p.message}`));
    this.engine = engine;
    return engine;
  }

  protected get view(): RunView {
    const shown = this.viewing ?? { step: this.step, metrics: this.metrics, telemetry: this.telemetry };
    return {
      name: this.runDir ? basename(this.runDir) : 'training',
      step: shown.step,
      ...(this.summary ? { model: this.summary } : {}),
      ...(shown.metrics ? { metrics: shown.metrics } : {}),
      ...(shown.telemetry ? { telemetry: shown.telemetry } : {}),
      ...(this.importance?.at === shown.step && this.importance.known ? { importance: this.importance.known } : {}),
    };
  }

  /** Asks the engine for the newest heads report saved at or before the step shown, once per step. */
  private async askImportance(): Promise<void> {
    const at = this.view.step;
    if (!this.engine || !this.runDir || this.importance?.at === at) return;
    try {
      const report = await this.engine.request(headsSaved, { runDir: this.runDir, step: at });
      this.importance = { at, known: report ? { step: report.step, heads: report.importance } : undefined };
    } catch (err) {
      this.importance = { at, known: undefined };
      this.print(`importance not shown: ${(err as Error).message}`);
    }
  }

  protected override initializeRequest(response: DebugProtocol.InitializeResponse): void {
    response.body = {
      supportsConfigurationDoneRequest: true,
      supportsFunctionBreakpoints: true,
      supportsConditionalBreakpoints: true,
      supportsEvaluateForHovers: false,
      supportsStepBack: true,
      supportsDataBreakpoints: true,
      supportsRestartFrame: true,
      supportsTerminateRequest: true,
      exceptionBreakpointFilters: EXCEPTION_FILTERS,
    };
    this.sendResponse(response);
    this.sendEvent(new InitializedEvent());
  }

  protected override configurationDoneRequest(response: DebugProtocol.ConfigurationDoneResponse): void {
    this.configured();
    this.sendResponse(response);
  }

  protected override setFunctionBreakPointsRequest(
    response: DebugProtocol.SetFunctionBreakpointsResponse,
    args: DebugProtocol.SetFunctionBreakpointsArguments,
  ): void {
    this.functionBreakpoints = args.breakpoints.map((bp) => readFunctionBreakpoint(this.nextId++, bp, this.summary));
    this.joinBreakpoints();
    response.body = { breakpoints: this.functionBreakpoints.map(shown) };
    this.sendResponse(response);
  }

  private joinBreakpoints(): void {
    this.breakpoints = [...this.functionBreakpoints, ...this.dataBreakpoints, ...this.lineBreakpoints];
  }

  /** The steps the run plans (the lines of its steps source). */
  protected plannedSteps(): number {
    return Math.max(this.summary?.totalSteps ?? 0, this.step);
  }

  /** Line breakpoints: on the run's steps source, line N is `step N` (steps.ts); Run to Cursor sets one. */
  protected override setBreakPointsRequest(
    response: DebugProtocol.SetBreakpointsResponse,
    args: DebugProtocol.SetBreakpointsArguments,
  ): void {
    const lines = (args.breakpoints ?? []).map((bp) => ({ ...bp, line: this.convertClientLineToDebugger(bp.line) }));
    this.lineBreakpoints = readLineBreakpoints(() => this.nextId++, args.source, lines);
    this.joinBreakpoints();
    response.body = {
      breakpoints: this.lineBreakpoints.map((bp, i) => ({
        ...shown(bp),
        line: this.convertDebuggerLineToClient(lines[i]!.line),
      })),
    };
    this.sendResponse(response);
  }

  /** The steps source's text (the only source the adapter serves). */
  protected override sourceRequest(response: DebugProtocol.SourceResponse, args: DebugProtocol.SourceArguments) {
    const ref = args.source?.sourceReference ?? args.sourceReference;
    if (ref !== STEPS_REFERENCE) return this.sendErrorResponse(response, 4, `no source ${ref}`);
    // No mimeType: VS Code takes the language from the name's .steps, where breakpoints may be set.
    response.body = { content: stepsText(this.plannedSteps()) };
    this.sendResponse(response);
  }

  /** Break on Value Change is offered on a head's statistics in the Variables view. */
  protected override dataBreakpointInfoRequest(
    response: DebugProtocol.DataBreakpointInfoResponse,
    args: DebugProtocol.DataBreakpointInfoArguments,
  ): void {
    const stat =
      args.variablesReference === undefined ? undefined : statOf(this.view, args.variablesReference, args.name);
    response.body = stat
      ? { dataId: stat.dataId, description: `${stat.dataId} moves, or meets a condition`, accessTypes: ['write'] }
      : { dataId: null, description: "only a head's telemetry statistics can be watched" };
    this.sendResponse(response);
  }

  protected override setDataBreakpointsRequest(
    response: DebugProtocol.SetDataBreakpointsResponse,
    args: DebugProtocol.SetDataBreakpointsArguments,
  ): void {
    const row = this.view.telemetry;
    const valueOf = (dataId: string): number | null | undefined => {
      const cut = dataId.lastIndexOf('.');
      const k = row?.heads.indexOf(dataId.slice(0, cut)) ?? -1;
      return k < 0 ? undefined : row!.stats[dataId.slice(cut + 1)]?.[k];
    };
    this.dataBreakpoints = args.breakpoints.map((bp) =>
      readDataBreakpoint(this.nextId++, bp, valueOf(bp.dataId), this.summary),
    );
    this.joinBreakpoints();
    response.body = { breakpoints: this.dataBreakpoints.map(shown) };
    this.sendResponse(response);
  }

  protected override setExceptionBreakPointsRequest(
    response: DebugProtocol.SetExceptionBreakpointsResponse,
    args: DebugProtocol.SetExceptionBreakpointsArguments,
  ): void {
    this.filters = args.filters;
    this.sendResponse(response);
  }

  protected override threadsRequest(response: DebugProtocol.ThreadsResponse): void {
    response.body = { threads: threads(this.view) };
    this.sendResponse(response);
  }

  protected override stackTraceRequest(response: DebugProtocol.StackTraceResponse): void {
    const frames = stackFrames(this.view).map((f) => ({ ...f, line: this.convertDebuggerLineToClient(f.line) }));
    response.body = { stackFrames: frames, totalFrames: frames.length };
    this.sendResponse(response);
  }

  protected override scopesRequest(response: DebugProtocol.ScopesResponse, args: DebugProtocol.ScopesArguments): void {
    response.body = { scopes: scopes(this.view, args.frameId) };
    this.sendResponse(response);
  }

  protected override async variablesRequest(
    response: DebugProtocol.VariablesResponse,
    args: DebugProtocol.VariablesArguments,
  ): Promise<void> {
    await this.askImportance();
    response.body = { variables: variables(this.view, args.variablesReference) };
    this.sendResponse(response);
    // A head's attention map expanded: the extension opens that head at that step (protocol/debugEvents.ts).
    const opened = openedHead(this.view, args.variablesReference);
    if (opened && this.runDir)
      this.sendEvent(new Event(OPEN_HEAD, { runDir: this.runDir, ...opened } satisfies OpenHead));
  }

  protected override evaluateRequest(response: DebugProtocol.EvaluateResponse, args: DebugProtocol.EvaluateArguments) {
    try {
      response.body = { result: evaluate(this.view, args.expression), variablesReference: 0 };
      this.sendResponse(response);
    } catch (err) {
      this.sendErrorResponse(response, 2, (err as Error).message);
    }
  }

  protected override async disconnectRequest(response: DebugProtocol.DisconnectResponse) {
    this.ended = true;
    await this.engine?.stop();
    this.sendResponse(response);
  }

  protected override async terminateRequest(response: DebugProtocol.TerminateResponse) {
    this.ended = true;
    await this.engine?.stop();
    this.sendResponse(response);
    this.sendEvent(new TerminatedEvent());
  }

  protected pause(
    reason: string,
    description = `step ${this.viewing?.step ?? this.step}`,
    hitBreakpointIds: number[] = [],
  ): void {
    const event = new StoppedEvent(reason, THREAD_ID) as DebugProtocol.StoppedEvent;
    event.body.description = description;
    if (reason === 'exception') event.body.text = description;
    if (hitBreakpointIds.length) event.body.hitBreakpointIds = hitBreakpointIds;
    this.sendEvent(event);
  }

  protected finish(why: string): void {
    if (this.ended) return;
    this.ended = true;
    this.print(why);
    this.sendEvent(new TerminatedEvent());
  }

  protected print(line: string): void {
    this.sendEvent(new OutputEvent(`${line}\n`, 'console'));
  }
}
