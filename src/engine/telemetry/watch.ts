/**
 * Watch conditions over telemetry (issue 31's conditional and data breakpoints): a small expression
 * language evaluated at each telemetry row, against that row's per-head statistics and the step's
 * metrics. Heads are named as everywhere else (`cross:1.0`, kind:layer.head from 0), with `*` for
 * any layer or head:
 *
 *   cross:1.*.entropy < 0.2                       some head of cross layer 1 below 0.2 nats
 *   decoder_self:2.1.confidence > 0.9 && step > 500
 *   max(encoder_self:*.*.confidence) > 0.95       the largest over every encoder head
 *
 * A comparison over a head pattern holds when it holds for some head; those heads are reported.
 * `max`, `min` and `mean` fold a pattern to one number (heads with no value are left out).
 * Metrics, named as metrics.jsonl names them: step, loss, nll, lr, tokens_per_sec, grad_norm (the
 * global gradient norm; a head's is cross:0.0.grad_norm), val_loss, val_bleu.
 */
import { ATTENTION_KINDS, type AttentionKind } from '../../protocol/attention';
import type { MetricsRow } from '../run/runDir';
import type { Finding, TelemetryRow } from '../../protocol/telemetry';

type Scalar = { t: 'num'; v: number | null };
type PerHead = { t: 'heads'; v: Map<string, number | null> };
type Truth = { t: 'bool'; v: boolean; heads: string[] };
/** What an expression is worth at a row: a number, a value per head, or a condition and its heads. */
export type Value = Scalar | PerHead | Truth;

/** A parsed expression of the language: call it with a row to evaluate it. */
export interface Expression {
  source: string;
  value(row: TelemetryRow, metrics: Partial<MetricsRow>): Value;
}

/** A parsed condition: call it with a row to evaluate it. */
export interface Watch {
  source: string;
  evaluate(row: TelemetryRow, metrics: Partial<MetricsRow>): { hit: boolean; heads: string[] };
}

const METRICS = ['step', 'loss', 'nll', 'lr', 'tokens_per_sec', 'grad_norm', 'val_loss', 'val_bleu'] as const;
const FOLDS = { max: Math.max, min: Math.min, mean: undefined } as const;
const COMPARE: Record<string, (a: number, b: number) => boolean> = {
  '<': (a, b) => a < b,
  '<=': (a, b) => a <= b,
  '>': (a, b) => a > b,
  '>=': (a, b) => a >= b,
  '==': (a, b) => a === b,
  '!=': (a, b) => a !== b,
};
const ARITHMETIC: Record<string, (a: number, b: number) => number> = {
  '+': (a, b) => a + b,
  '-': (a, b) => a - b,
  '*': (a, b) => a * b,
  '/': (a, b) => a / b,
};

const TOKEN =
  /\s*(\d+(?:\.\d*)?(?:e[+-]?\d+)?|[A-Za-z_][A-Za-z_0-9]*:(?:\d+|\*)\.(?:\d+|\*)\.[A-Za-z_]+|[A-Za-z_]+|<=|>=|==|!=|&&|\|\||[-+*/()<>!,])/y;

type Eval = (row: TelemetryRow, metrics: Partial<MetricsRow>) => Value;

const NOT_A_CONDITION = 'it is a number, not a condition: compare it (e.g. "< 0.2")';

/**
 * Parses a condition `source` against a model's heads (`heads`: telemetry's head ids) and statistics
 * (`stats`: their names). Throws an error naming the position and what was expected, or saying that
 * it is a number where a condition is wanted.
 */
export function parseWatch(source: string, heads: readonly string[], stats: readonly string[]): Watch {
  const e = parseExpression(source, heads, stats, true);
  return {
    source,
    evaluate: (row, metrics) => {
      const v = e.value(row, metrics);
      if (v.t !== 'bool') throw new Error(NOT_A_CONDITION);
      return { hit: v.v, heads: v.heads };
    },
  };
}

/**
 * Parses any expression of the language (a number, a head pattern, a condition), as parseWatch does;
 * with `condition`, one that is not a condition is refused.
 */
export function parseExpression(
  source: string,
  heads: readonly string[],
  stats: readonly string[],
  condition = false,
): Expression {
  const tokens: { text: string; at: number }[] = [];
  TOKEN.lastIndex = 0;
  while (TOKEN.lastIndex < source.length) {
    const at = TOKEN.lastIndex;
    const m = TOKEN.exec(source);
    if (!m) {
      const rest = source.slice(at);
      if (!rest.trim()) break;
      const column = at + rest.length - rest.trimStart().length + 1;
      throw new Error(`watch "${source}": cannot read "${rest.trim()}" (column ${column})`);
    }
    tokens.push({ text: m[1]!, at: m.index + m[0].length - m[1]!.length });
  }
  let i = 0;
  const fail = (what: string, at = i): never => {
    const t = tokens[at];
    const where = t ? `"${t.text}" (column ${t.at + 1})` : 'the end';
    // "expected X, found Y" where something else was wanted; "…, at column N" where a name is unknown
    const tail = what.startsWith('expected') ? `, found ${where}` : t ? `, at column ${t.at + 1}` : '';
    throw new Error(`watch "${source}": ${what}${tail}`);
  };
  const peek = (): string | undefined => tokens[i]?.text;
  const take = (text: string): boolean => (peek() === text ? (i++, true) : false);
  const expect = (text: string): void => void (take(text) || fail(`expected "${text}"`));

  const binary =
    (next: () => Eval, ops: readonly string[], combine: (op: string, a: Value, b: Value) => Value) => () => {
      let left = next();
      for (let op = peek(); op !== undefined && ops.includes(op); op = peek()) {
        i++;
        const [a, b] = [left, next()];
        left = (r, m) => combine(op, a(r, m), b(r, m));
      }
      return left;
    };

  const atom = (): Eval => {
    const t = peek();
    if (t === undefined) return fail('expected a number, a metric or a head statistic');
    i++;
    if (t === '(') {
      const e = or();
      expect(')');
      return e;
    }
    if (t === '-') {
      const e = atom();
      return (r, m) => mapNumbers(e(r, m), (x) => -x);
    }
    if (t === '!') {
      const e = atom();
      return (r, m) => {
        const v = truth(e(r, m));
        return { t: 'bool', v: !v.v, heads: [] };
      };
    }
    if (/^\d/.test(t)) return () => ({ t: 'num', v: Number(t) });
    if (t in FOLDS) {
      expect('(');
      const e = or();
      expect(')');
      return (r, m) => fold(t as keyof typeof FOLDS, e(r, m));
    }
    if ((METRICS as readonly string[]).includes(t))
      return (_r, m) => ({ t: 'num', v: m[t as keyof MetricsRow] ?? null });
    if (t.includes(':')) return headPattern(t);
    i--;
    return fail(`expected a number, a metric (${METRICS.join(', ')}) or a head statistic such as cross:0.*.entropy`);
  };

  const headPattern = (t: string): Eval => {
    const [kind, rest] = t.split(':') as [string, string];
    const [layer, head, stat] = rest.split('.') as [string, string, string];
    if (!(ATTENTION_KINDS as readonly string[]).includes(kind))
      fail(`no attention kind "${kind}" (${ATTENTION_KINDS.join(', ')})`, i - 1);
    if (!stats.includes(stat)) fail(`no statistic "${stat}" (${stats.join(', ')})`, i - 1);
    const matching = heads.filter((id) => matches(id, kind as AttentionKind, layer, head));
    if (!matching.length) fail(`no head ${kind}:${layer}.${head} in this model (heads count from 0)`, i - 1);
    return (row) => {
      const values = new Map<string, number | null>();
      for (const id of matching) {
        const k = row.heads.indexOf(id);
        values.set(id, k < 0 ? null : (row.stats[stat]?.[k] ?? null));
      }
      return { t: 'heads', v: values };
    };
  };

  const product = binary(atom, ['*', '/'], (op, a, b) => arithmetic(ARITHMETIC[op]!, a, b));
  const sum = binary(product, ['+', '-'], (op, a, b) => arithmetic(ARITHMETIC[op]!, a, b));
  const comparison = binary(sum, Object.keys(COMPARE), (op, a, b) => compare(COMPARE[op]!, a, b));
  const and = binary(comparison, ['&&'], (_op, a, b) => {
    const [x, y] = [truth(a), truth(b)];
    return { t: 'bool', v: x.v && y.v, heads: x.v && y.v ? union(x.heads, y.heads) : [] };
  });
  const or: () => Eval = binary(and, ['||'], (_op, a, b) => {
    const [x, y] = [truth(a), truth(b)];
    return { t: 'bool', v: x.v || y.v, heads: union(x.v ? x.heads : [], y.v ? y.heads : []) };
  });

  const whole = or();
  if (i < tokens.length) fail('expected an operator or the end');
  // Which parts are numbers and which conditions does not depend on the values: one evaluation
  // over zeros finds every misuse now, not at some telemetry row during training.
  const zeros: TelemetryRow = { step: 0, pairs: 1, heads: [...heads], stats: {} };
  for (const name of stats) zeros.stats[name] = heads.map(() => 0);
  try {
    const v = whole(zeros, Object.fromEntries(METRICS.map((m) => [m, 0])));
    if (condition && v.t !== 'bool') throw new Error(NOT_A_CONDITION);
  } catch (err) {
    throw new Error(`watch "${source}": ${(err as Error).message}`);
  }
  return { source, value: whole };
}

function matches(id: string, kind: AttentionKind, layer: string, head: string): boolean {
  const m = /^([a-z_]+):(\d+)\.(\d+)$/.exec(id);
  return !!m && m[1] === kind && (layer === '*' || m[2] === layer) && (head === '*' || m[3] === head);
}

function mapNumbers(v: Value, f: (x: number) => number): Value {
  if (v.t === 'num') return { t: 'num', v: v.v === null ? null : f(v.v) };
  if (v.t === 'heads') return { t: 'heads', v: new Map([...v.v].map(([k, x]) => [k, x === null ? null : f(x)])) };
  throw new Error('a condition cannot be negated with "-": use "!"');
}

function arithmetic(f: (a: number, b: number) => number, a: Value, b: Value): Value {
  if (a.t === 'bool' || b.t === 'bool') throw new Error('arithmetic on a condition');
  if (a.t === 'num' && b.t === 'num') return { t: 'num', v: a.v === null || b.v === null ? null : f(a.v, b.v) };
  if (a.t === 'heads' && b.t === 'heads')
    throw new Error('arithmetic between two head patterns: fold one with max, min or mean');
  return a.t === 'heads'
    ? mapNumbers(a, (x) => (b.v === null ? NaN : f(x, b.v as number)))
    : mapNumbers(b, (y) => (a.v === null ? NaN : f(a.v as number, y)));
}

/** A comparison; over a head pattern it holds for the heads it holds for. A missing value holds for none. */
function compare(f: (a: number, b: number) => boolean, a: Value, b: Value): Truth {
  if (a.t === 'bool' || b.t === 'bool') throw new Error('a comparison of a condition');
  if (a.t === 'heads' && b.t === 'heads')
    throw new Error('a comparison of two head patterns: fold one with max, min or mean');
  if (a.t === 'num' && b.t === 'num') return { t: 'bool', v: a.v !== null && b.v !== null && f(a.v, b.v), heads: [] };
  const heads: string[] = [];
  const [pattern, other, flipped] = a.t === 'heads' ? [a, b as Scalar, false] : [b as PerHead, a as Scalar, true];
  for (const [id, x] of pattern.v) {
    if (x === null || other.v === null) continue;
    if (flipped ? f(other.v, x) : f(x, other.v)) heads.push(id);
  }
  return { t: 'bool', v: heads.length > 0, heads };
}

function truth(v: Value): Truth {
  if (v.t !== 'bool')
    throw new Error('"&&", "||" and "!" need conditions on both sides (a comparison such as "< 0.2")');
  return v;
}

function fold(name: keyof typeof FOLDS, v: Value): Scalar {
  if (v.t !== 'heads') throw new Error(`${name}() takes a head pattern such as cross:*.*.entropy`);
  const xs = [...v.v.values()].filter((x): x is number => x !== null);
  if (!xs.length) return { t: 'num', v: null };
  if (name === 'mean') return { t: 'num', v: xs.reduce((s, x) => s + x, 0) / xs.length };
  return { t: 'num', v: FOLDS[name](...xs) };
}

const union = (a: string[], b: string[]): string[] => [...new Set([...a, ...b])];

/**
 * A run's conditions (training.watch, or a request's params.watch: `where`), each refused with its
 * index when it cannot mean anything.
 */
export function parseWatches(
  sources: readonly string[],
  heads: readonly string[],
  stats: readonly string[],
  where = 'training.watch',
): Watch[] {
  return sources.map((w, i) => {
    try {
      return parseWatch(w, heads, stats);
    } catch (err) {
      throw new Error(`${where}[${i}]: ${(err as Error).message}`);
    }
  });
}

/** The findings of the conditions that hold at a telemetry row (check `watch`; its mode, break by default, applies). */
export function watchFindings(watches: readonly Watch[], row: TelemetryRow, metrics: Partial<MetricsRow>): Finding[] {
  return watches.flatMap((w) => {
    const { hit, heads } = w.evaluate(row, metrics);
    if (!hit) return [];
    const which = heads.length ? ` for ${heads.join(', ')}` : '';
    return [
      {
        step: row.step,
        check: 'watch' as const,
        message: `watch "${w.source}" holds${which}`,
        ...(heads[0] ? { head: heads[0] } : {}),
      },
    ];
  });
}
