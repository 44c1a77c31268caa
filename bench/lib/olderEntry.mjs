// This tree's bench entry (bench/lib/engine.ts) made to bundle against an older engine: a statement
// that imports or re-exports from a module the older tree lacks, or a name one of its modules lacks,
// has those names stubbed as `undefined`, so that the benches' feature checks (e.g. optimizerOf's
// `engine.createOptimizer ?`) see them missing. Line numbers are kept for esbuild's next report.

const FROM = /from\s+['"][^'"]+['"];?\s*$/;

/** [first, last] lines (0-based) of the import or export statement that holds line `at`. */
function statementAt(lines, at) {
  let first = at;
  while (first > 0 && !/^(import|export)\b/.test(lines[first])) first--;
  let last = first;
  while (last < lines.length - 1 && !FROM.test(lines[last])) last++;
  return [first, last];
}

/** The statement's kind and its names as bound here (`a as b` → b; type-only names left out). */
function parse(text) {
  const m = /^(import|export)\s+(type\s+)?\{([^}]*)\}\s*from\s*(['"][^'"]+['"])/.exec(text);
  if (!m) return undefined;
  const names = m[2]
    ? []
    : m[3]
        .split(',')
        .map((s) => s.trim())
        .filter((s) => s && !s.startsWith('type '));
  return { kind: m[1], names, source: m[4] };
}

/** `a as b` → its name in the module (`a`) and its name here (`b`); `a` → `a` both. */
const exported = (name) => name.split(/\s+as\s+/)[0];
const local = (name) => name.split(/\s+as\s+/).pop();
const stub = (kind, names) =>
  names.length
    ? `${kind === 'export' ? 'export ' : ''}const ${names.map((n) => `${local(n)} = undefined`).join(', ')};`
    : '';

/**
 * Rewrites `lines` (the entry, in place) for one esbuild error: `text` its message, `line` its
 * 1-based line. Returns false where it cannot (the error is of another kind).
 */
export function stubFor(lines, text, line) {
  const [first, last] = statementAt(lines, line - 1);
  const s = parse(lines.slice(first, last + 1).join(' '));
  if (!s) return false;
  const missing = /^No matching export in "[^"]+" for import "([^"]+)"/.exec(text)?.[1];
  let replaced;
  if (/^Could not resolve/.test(text)) replaced = stub(s.kind, s.names);
  else if (missing) {
    const kept = s.names.filter((n) => exported(n) !== missing);
    const gone = s.names.filter((n) => exported(n) === missing);
    replaced = `${s.kind} { ${kept.join(', ')} } from ${s.source}; ${stub(s.kind, gone)}`;
  } else return false;
  lines.splice(first, last - first + 1, replaced, ...Array(last - first).fill(''));
  return true;
}
