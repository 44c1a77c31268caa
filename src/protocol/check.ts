/**
 * Tiny runtime validators for messages that cross a process or frame boundary. Each returns
 * `undefined` when the value is well formed, else a message that names the offending field
 * (`engine/info result: backends[1] must be a string, got number`). No dependencies: both sides
 * of every wire import this file.
 */

/** The type carrier of Check: a symbol no value ever holds. */
declare const checked: unique symbol;

/**
 * A validator of the values of type T. `Check<T>` is tied to T at compile time: `object<T>()` wants
 * a check for every field of T and no other, each of its field's exact type (optional fields take
 * `optional(…)`, nullable ones `nullable(…)`), so an interface and its validator cannot drift apart.
 * A plain `(value, path) => …` function is trusted to check what its annotation says. `Check`
 * alone (T = any) is a validator of anything, for code that passes checks around.
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- bare `Check` checks anything: both ways assignable
export interface Check<T = any> {
  (value: unknown, path: string): string | undefined;
  /** Type carrier only; never set. Invariant in T: Check<string> is neither Check<'a'> nor Check<string | null>. */
  readonly [checked]?: (value: T) => T;
}

/** A check for each field of T, of that field's type (an untyped `object({…})` takes any checks). */
export type Fields<T> = unknown extends T ? Record<string, Check> : { [K in keyof Required<T>]: Check<T[K]> };

export function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  return typeof value;
}

export const isString: Check<string> = (v, path) =>
  typeof v === 'string' ? undefined : `${path} must be a string, got ${describe(v)}`;

export const isFiniteNumber: Check<number> = (v, path) =>
  typeof v === 'number' && Number.isFinite(v) ? undefined : `${path} must be a finite number, got ${describe(v)}`;

export function oneOf<const V extends readonly string[]>(values: V): Check<V[number]> {
  return (v, path) =>
    typeof v === 'string' && values.includes(v)
      ? undefined
      : `${path} must be one of ${values.join(', ')}, got ${JSON.stringify(v)}`;
}

export function arrayOf<T>(item: Check<T>): Check<T[]> {
  return (v, path) => {
    if (!Array.isArray(v)) return `${path} must be an array, got ${describe(v)}`;
    for (let i = 0; i < v.length; i++) {
      const why = item(v[i], `${path}[${i}]`);
      if (why) return why;
    }
    return undefined;
  };
}

/**
 * An object with these fields (extra fields are allowed: newer peers may add some). T comes from the
 * annotation the result is assigned to (`const c: Check<RunSummary> = object({…})`) or is given
 * (`object<RunSummary>({…})`); `fields` must then check exactly T's fields.
 */
export function object<T>(fields: Fields<NoInfer<T>>): Check<T> {
  return (v, path) => {
    if (typeof v !== 'object' || v === null || Array.isArray(v)) return `${path} must be an object, got ${describe(v)}`;
    const rec = v as Record<string, unknown>;
    for (const [name, check] of Object.entries(fields as Record<string, Check>)) {
      const why = check(rec[name], `${path}.${name}`);
      if (why) return why;
    }
    return undefined;
  };
}

/** No parameters: JSON-RPC sends none, or an empty/null value. */
export const isNothing: Check<void> = (v, path) =>
  v === undefined ||
  v === null ||
  (Array.isArray(v) && v.length === 0) ||
  (typeof v === 'object' && Object.keys(v).length === 0)
    ? undefined
    : `${path} must be empty, got ${describe(v)}`;

export const isBoolean: Check<boolean> = (v, path) =>
  typeof v === 'boolean' ? undefined : `${path} must be true or false, got ${describe(v)}`;

/** A whole number ≥ 0: a step, an index, a count that may be zero. */
export const isIndex: Check<number> = (v, path) =>
  Number.isInteger(v) && (v as number) >= 0 ? undefined : `${path} must be a whole number ≥ 0, got ${shown(v)}`;

/** A whole number ≥ 1: a size, a beam width, a dimension. */
export const isPositiveInt: Check<number> = (v, path) =>
  Number.isInteger(v) && (v as number) >= 1 ? undefined : `${path} must be a whole number ≥ 1, got ${shown(v)}`;

/** A whole number in [lo, hi]: every size a request can ask for is bounded (docs/ARCHITECTURE.md). */
export function intIn(lo: number, hi: number): Check<number> {
  return (v, path) =>
    Number.isInteger(v) && (v as number) >= lo && (v as number) <= hi
      ? undefined
      : `${path} must be a whole number from ${lo} to ${hi}, got ${shown(v)}`;
}

/** A number in [lo, hi]. */
export function numberIn(lo: number, hi: number): Check<number> {
  return (v, path) =>
    typeof v === 'number' && v >= lo && v <= hi
      ? undefined
      : `${path} must be a number from ${lo} to ${hi}, got ${shown(v)}`;
}

export function optional<T>(check: Check<T>): Check<T | undefined> {
  return (v, path) => (v === undefined ? undefined : check(v, path));
}

export function nullable<T>(check: Check<T>): Check<T | null> {
  return (v, path) => (v === null ? undefined : check(v, path));
}

export const isFloat32Array: Check<Float32Array> = (v, path) =>
  v instanceof Float32Array
    ? undefined
    : `${path} must be a Float32Array, got ${
        v === null || typeof v !== 'object'
          ? describe(v)
          : Array.isArray(v)
            ? 'array'
            : (v.constructor?.name ?? 'object')
      }`;

/** An array of `rank` whole numbers ≥ 1 (S: the shape's tuple type, e.g. [rows: number, cols: number]). */
export function shapeOf<S extends number[] = number[]>(rank: number): Check<S> {
  return (v, path) => {
    if (!Array.isArray(v) || v.length !== rank)
      return `${path} must be an array of ${rank} dimensions, got ${Array.isArray(v) ? `${v.length}` : describe(v)}`;
    for (let i = 0; i < rank; i++) {
      const why = isPositiveInt(v[i], `${path}[${i}]`);
      if (why) return why;
    }
    return undefined;
  };
}

/** A value for an error message: short, never a whole file or a 50 MB string. */
export function shown(v: unknown, max = 60): string {
  const s = typeof v === 'string' ? JSON.stringify(v) : (JSON.stringify(v) ?? describe(v));
  return s.length > max ? `${s.slice(0, max)}… (${s.length} characters)` : s;
}

/** The longest path a request may name (Linux's PATH_MAX). */
export const MAX_PATH_CHARS = 4096;

/**
 * A file or folder the engine is to read or write: absolute (the engine does not guess a working
 * folder; the client resolves what the user typed against the workspace), at most MAX_PATH_CHARS
 * characters, no NUL. An error shows at most the path's first 80 characters.
 */
export const isAbsolutePath: Check<string> = (v, path) => {
  if (typeof v !== 'string' || !v) return `${path} must be a path, got ${shown(v)}`;
  if (v.length > MAX_PATH_CHARS) return `${path} is ${v.length} characters long, more than a path's ${MAX_PATH_CHARS}`;
  if (v.includes('\0')) return `${path} holds a NUL character: ${shown(v, 80)}`;
  if (!/^(\/|[A-Za-z]:[\\/]|\\\\)/.test(v))
    return `${path} must be an absolute path, got ${shown(v, 80)} (relative to which folder?)`;
  return undefined;
};

/**
 * The entries of a comma-separated list flag ("a, b"), trimmed. An empty list, an empty entry ("a,,b",
 * "a,") or an entry given twice is refused (RangeError naming the flag and the entry), never dropped.
 */
export function commaList(text: string, flag: string, example: string): string[] {
  const entries = text.split(',').map((s) => s.trim());
  if (entries.every((e) => e === '')) throw new RangeError(`${flag} needs at least one entry, e.g. ${example}`);
  const empty = entries.indexOf('');
  if (empty >= 0)
    throw new RangeError(`${flag} ${JSON.stringify(text)}: entry ${empty + 1} is empty; give e.g. ${example}`);
  const twice = entries.find((e, i) => entries.indexOf(e) !== i);
  if (twice !== undefined) throw new RangeError(`${flag}: ${JSON.stringify(twice)} is given twice; name it once`);
  return entries;
}
