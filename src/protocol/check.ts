/**
 * Tiny runtime validators for messages that cross a process or frame boundary. Each returns
 * `undefined` when the value is well formed, else a message that names the offending field
 * (`engine/info result: backends[1] must be a string, got number`). No dependencies: both sides
 * of every wire import this file.
 */

export type Check = (value: unknown, path: string) => string | undefined;

export function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  return typeof value;
}

export const isString: Check = (v, path) =>
  typeof v === 'string' ? undefined : `${path} must be a string, got ${describe(v)}`;

export const isFiniteNumber: Check = (v, path) =>
  typeof v === 'number' && Number.isFinite(v) ? undefined : `${path} must be a finite number, got ${describe(v)}`;

export function oneOf(values: readonly string[]): Check {
  return (v, path) =>
    typeof v === 'string' && values.includes(v)
      ? undefined
      : `${path} must be one of ${values.join(', ')}, got ${JSON.stringify(v)}`;
}

export function arrayOf(item: Check): Check {
  return (v, path) => {
    if (!Array.isArray(v)) return `${path} must be an array, got ${describe(v)}`;
    for (let i = 0; i < v.length; i++) {
      const why = item(v[i], `${path}[${i}]`);
      if (why) return why;
    }
    return undefined;
  };
}

/** An object with these fields (extra fields are allowed: newer peers may add some). */
export function object(fields: Record<string, Check>): Check {
  return (v, path) => {
    if (typeof v !== 'object' || v === null || Array.isArray(v)) return `${path} must be an object, got ${describe(v)}`;
    const rec = v as Record<string, unknown>;
    for (const [name, check] of Object.entries(fields)) {
      const why = check(rec[name], `${path}.${name}`);
      if (why) return why;
    }
    return undefined;
  };
}

/** No parameters: JSON-RPC sends none, or an empty/null value. */
export const isNothing: Check = (v, path) =>
  v === undefined ||
  v === null ||
  (Array.isArray(v) && v.length === 0) ||
  (typeof v === 'object' && Object.keys(v).length === 0)
    ? undefined
    : `${path} must be empty, got ${describe(v)}`;
