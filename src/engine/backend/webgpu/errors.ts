/**
 * Dawn's errors as failures of the work that caused them. WebGPU reports an out-of-memory,
 * validation or internal error only to an error scope or to the device's `uncapturederror` event,
 * and tfjs listens to neither: an allocation that failed leaves an invalid buffer, every dispatch
 * that binds it is skipped, and the tensors it should have written hold whatever they held. A
 * training step on such buffers gives a wrong loss and a wrong update, silently (issue 28: a `big`
 * run out of GPU memory logged losses 2.04, 6.70, 82.6, 125, 148, 0.000 and wrote a checkpoint).
 *
 * watchGpu(work) opens error scopes around a piece of GPU work; check() and close() submit what
 * tfjs has queued (encoding errors are raised when a command buffer is finished), pop the scopes,
 * and throw a GpuError when Dawn reported anything, or when the device was lost. The scopes are
 * one stack per device while work runs concurrently (a server answers requests while it trains), so
 * one set of scopes is open while any work is watched: popping it reports what it caught to every
 * work inside it, and a fresh set is pushed for those still running. An error could thus fail a
 * work that ran beside the faulty one; it never passes unreported. Off webgpu all of this is a no-op.
 */
import * as tf from '@tensorflow/tfjs-core';
import { describeAdapter } from '../gpuProbe';

export type GpuErrorKind = 'out-of-memory' | 'validation' | 'internal' | 'device-lost';
const SCOPED: GpuErrorKind[] = ['out-of-memory', 'validation', 'internal'];

/** A Dawn error (or lost device) that failed a piece of GPU work. */
export class GpuError extends Error {
  constructor(
    readonly kind: GpuErrorKind,
    /** What failed, e.g. "step 12 (forward and backward passes)". */
    readonly work: string,
    /** Dawn's message, as it gave it. */
    readonly dawn: string,
  ) {
    super(`${work}: ${KIND_WORDS[kind]} (Dawn: ${dawn.split('\n')[0]!.trim()})`);
    this.name = 'GpuError';
  }
}

const KIND_WORDS: Record<GpuErrorKind, string> = {
  'out-of-memory': 'the GPU ran out of memory',
  validation: 'the GPU refused a command (a validation error)',
  internal: 'the GPU driver failed (an internal error)',
  'device-lost': 'the GPU device was lost',
};

/** What the engine uses of the WebGPU API and of tfjs-backend-webgpu's backend (no @webgpu/types here). */
interface Device extends EventTarget {
  pushErrorScope(filter: GpuErrorKind): void;
  popErrorScope(): Promise<{ message: string; constructor: { name: string } } | null>;
  createBuffer(d: { size: number; usage: number }): { destroy(): void };
  destroy(): void;
  readonly lost: Promise<{ reason: string; message: string }>;
  readonly limits: { maxBufferSize: number; maxStorageBufferBindingSize: number };
}
interface Backend {
  device: Device;
  commandEncoder: unknown;
  endComputePassEncoder(): void;
  submitQueue(): void;
  bufferManager?: { numBytesAllocated: number; numBytesUsed: number };
}

interface Watcher {
  work: string;
  errors: { kind: GpuErrorKind; message: string }[];
}

const KIND_OF_CLASS: Record<string, GpuErrorKind> = {
  GPUOutOfMemoryError: 'out-of-memory',
  GPUValidationError: 'validation',
  GPUInternalError: 'internal',
};

/** The device's lost state, its open scopes and the work inside them. */
class DeviceMonitor {
  lost: { reason: string; message: string } | undefined;
  /** Errors no scope caught (raised while no work was watched): the next watched work fails with them. */
  private stray: Watcher['errors'] = [];
  private readonly inside = new Set<Watcher>();
  private open = false;
  /** Pops resolve in order; each later one waits for those before it. */
  private settled: Promise<void> = Promise.resolve();

  constructor(readonly backend: Backend) {
    const device = backend.device;
    device.addEventListener('uncapturederror', (event) => {
      const error = (event as Event & { error: { message: string; constructor: { name: string } } }).error;
      const e = { kind: KIND_OF_CLASS[error.constructor.name] ?? 'internal', message: error.message };
      if (this.inside.size) for (const w of this.inside) w.errors.push(e);
      else this.stray.push(e);
    });
    void device.lost.then((info) => (this.lost = { reason: info.reason, message: info.message }));
  }

  enter(w: Watcher): void {
    if (!this.open) this.push();
    this.inside.add(w);
    w.errors.push(...this.stray.splice(0));
  }

  /** Ends the open scopes (their errors go to every work inside them) and reopens them for `stay`ing work. */
  cycle(what: string, leaving?: Watcher): Promise<void> {
    const inside = [...this.inside];
    plantFault(this.backend.device, inside, what);
    try {
      this.backend.endComputePassEncoder();
      if (this.backend.commandEncoder) this.backend.submitQueue(); // finish(): encoding errors are raised here
    } catch (err) {
      for (const w of inside) w.errors.push({ kind: 'internal', message: (err as Error).message });
    }
    const pops = SCOPED.map(() => this.backend.device.popErrorScope());
    this.open = false;
    if (leaving) this.inside.delete(leaving);
    if (this.inside.size) this.push();
    const caught = Promise.all(
      pops.map((p) =>
        p.then(
          (e) => e && { kind: KIND_OF_CLASS[e.constructor.name] ?? 'internal', message: e.message },
          (err: Error) => ({ kind: 'internal' as const, message: `popErrorScope: ${err.message}` }),
        ),
      ),
    ).then((errors) => {
      for (const e of errors) if (e) for (const w of inside) w.errors.push(e);
    });
    this.settled = this.settled.then(() => caught);
    return this.settled;
  }

  private push(): void {
    for (const kind of SCOPED) this.backend.device.pushErrorScope(kind);
    this.open = true;
  }
}

const monitors = new WeakMap<object, DeviceMonitor>();

/** The monitor of the active backend's device; undefined off webgpu. */
function monitor(): DeviceMonitor | undefined {
  if (tf.getBackend() !== 'webgpu') return undefined;
  const backend = tf.backend() as unknown as Backend;
  let m = monitors.get(backend.device);
  if (!m) monitors.set(backend.device, (m = new DeviceMonitor(backend)));
  return m;
}

/** GPU work under watch: check() between its parts, close() at its end; both throw its GpuError. */
export interface GpuWatch {
  /** False off webgpu: nothing is watched and check() and close() return at once. */
  readonly active: boolean;
  /** Throws when anything since the work began failed on the GPU; the work stays watched. */
  check(part?: string): Promise<void>;
  /** As check(), and the work is no longer watched (call it once, also when the work threw). */
  close(part?: string): Promise<void>;
}

export function watchGpu(work: string): GpuWatch {
  const m = monitor();
  if (!m) return { active: false, check: async () => undefined, close: async () => undefined };
  const w: Watcher = { work, errors: [] };
  const failure = (part?: string): GpuError | undefined => {
    const what = part ? `${work} (${part})` : work;
    if (m.lost) return new GpuError('device-lost', what, m.lost.message || m.lost.reason);
    const e = w.errors[0];
    return e && new GpuError(e.kind, what, e.message);
  };
  const before = failure();
  if (before) throw before; // a lost device: nothing more can run on it
  m.enter(w);
  let closed = false;
  const settle = async (part: string | undefined, leave: boolean): Promise<void> => {
    if (closed) return;
    closed = leave;
    const what = part ? `${work} (${part})` : work;
    await m.cycle(what, leave ? w : undefined);
    const e = failure(part);
    if (e) {
      if (!leave) {
        closed = true;
        await m.cycle(what, w);
      }
      throw e;
    }
  };
  return { active: true, check: (part) => settle(part, false), close: (part) => settle(part, true) };
}

/**
 * Runs `f` watched: its result, or a GpuError when Dawn reported an error while it ran (rather than
 * its own error, which an invalid buffer most likely caused).
 */
export async function guardGpu<T>(work: string, f: () => Promise<T> | T): Promise<T> {
  const watch = watchGpu(work);
  let result: T;
  try {
    result = await f();
  } catch (err) {
    await watch.close(); // a GpuError from here explains err
    throw err;
  }
  await watch.close();
  return result;
}

/** What to do after a request failed on the GPU (the server's answer; training says more: train/gpuFailure.ts). */
export function gpuAdvice(err: GpuError): string {
  if (err.kind === 'device-lost')
    return (
      'The engine cannot go on with webgpu once its device is lost: restart it (in VS Code, reload the window), ' +
      'or set attentionDebugger.backend (the CLI: --backend) to wasm'
    );
  if (err.kind === 'out-of-memory')
    return 'Nothing of it was kept: ask for less at once (a shorter input, a smaller beam, fewer pairs), or use the wasm backend';
  return 'Nothing of it was kept: try again, or use the wasm backend, and report it if it happens again';
}

let adapterInWords = 'not known (webgpu is not loaded)';

/** Records the adapter Dawn gave tfjs (backend/index.ts), for messages. */
export function noteAdapter(info: Partial<Record<'vendor' | 'architecture' | 'device' | 'description', string>>): void {
  // GPUAdapterInfo's fields are getters on its prototype: read each, a spread would copy none.
  const field = (k: 'vendor' | 'architecture' | 'device' | 'description'): string => String(info[k] ?? '');
  const [vendor, architecture, device, description] = [
    field('vendor'),
    field('architecture'),
    field('device'),
    field('description'),
  ];
  const software = /llvmpipe|swiftshader|lavapipe/i.test(`${device} ${description}`);
  adapterInWords = describeAdapter({ adapter: { vendor, architecture, device, description, software } });
}

/** The adapter webgpu runs on, in words. */
export function gpuAdapterInWords(): string {
  return adapterInWords;
}

/** Bytes of GPU buffers tfjs has allocated (its pool included), and the device's buffer limit; off webgpu undefined. */
export function gpuMemory(): { allocated: number; maxBufferSize: number } | undefined {
  if (tf.getBackend() !== 'webgpu') return undefined;
  const backend = tf.backend() as unknown as Backend;
  return {
    allocated: backend.bufferManager?.numBytesAllocated ?? 0,
    maxBufferSize: backend.device.limits.maxBufferSize,
  };
}

/**
 * A test's planted fault: ATTENTION_DEBUGGER_GPU_FAULT=<kind>@<work> (e.g. `out-of-memory@step 3`,
 * or `validation@step 3 (update)` for one part of it), or plantGpuFault(). When that work's scopes
 * are next popped: `validation` creates a buffer past
 * the device's limit (a real Dawn validation error), `device-lost` destroys the device (a real loss),
 * and `out-of-memory` and `internal`, which Dawn cannot be made to raise on purpose, are reported
 * as if the scope had caught them.
 */
export const GPU_FAULT_ENV = 'ATTENTION_DEBUGGER_GPU_FAULT';
let planted: { kind: GpuErrorKind; work: string } | undefined;
let plantedFromEnv = false;

export function plantGpuFault(kind: GpuErrorKind, work: string): void {
  planted = { kind, work };
}

function plantFault(device: Device, inside: Watcher[], what: string): void {
  if (!plantedFromEnv) {
    plantedFromEnv = true;
    const m = /^(out-of-memory|validation|internal|device-lost)@(.+)$/.exec(process.env[GPU_FAULT_ENV] ?? '');
    if (m) planted = { kind: m[1] as GpuErrorKind, work: m[2]! };
  }
  const fault = planted;
  if (!fault || (fault.work !== what && !inside.some((w) => w.work === fault.work))) return;
  planted = undefined;
  const STORAGE = 0x80;
  if (fault.kind === 'validation') device.createBuffer({ size: 2 ** 40, usage: STORAGE }).destroy();
  else if (fault.kind === 'device-lost') device.destroy();
  else {
    const message = `${fault.kind} planted by ${GPU_FAULT_ENV} (a test)`;
    for (const w of inside) w.errors.push({ kind: fault.kind, message });
  }
}
