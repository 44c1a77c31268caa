// A real parallel corpus found on most Linux machines: the GNU gettext catalogs under
// /usr/share/locale/<lang>/LC_MESSAGES/*.mo, whose msgid (English) / msgstr (translation) tables
// give English -> <lang> pairs of UI sentences.
//
// .mo layout (GNU gettext manual, "The Format of GNU MO Files"), all u32 in the file's byte order:
//   0 magic 0x950412de (read little- or big-endian decides the byte order)   4 revision
//   8 N strings   12 offset of the msgid table   16 offset of the msgstr table   20/24 hash table
// Each table has N entries of (length, offset); strings are NUL-terminated, length excludes the NUL.
// Plural entries hold NUL-separated forms (we take the first), msgctxt is "context\x04msgid" (we
// drop the context), and the entry with an empty msgid is the header (charset of the msgstrs).
//
// Cleaning decisions: accelerators are stripped ("_File", "Ö_ffnen", "&Open", "(_F)" suffixes;
// "&&" -> "&"); an underscore is only treated as a mnemonic when it is the message's only one,
// so identifiers like LC_ALL_MESSAGES survive. printf directives (%s, %d, %1$s) are kept as-is:
// they must be copied verbatim by a translator, which is a fair thing to learn. Whitespace runs
// (including newlines) become one space so every pair fits on one line.
import { readdirSync, existsSync } from 'node:fs';
import { readRegularFile } from '../io/regularFile';
import { join } from 'node:path';
import { TextDecoder } from 'node:util';
import type { SentencePair } from './corpus';
import { stableFraction } from './random';

export const MO_MAGIC = 0x950412de;

export interface MoEntry {
  /** msgctxt, or null when the entry has none. */
  context: string | null;
  msgid: string;
  /** Plural msgid (msgid_plural), or null for a singular entry. */
  msgidPlural: string | null;
  /** Translations: one form, or one per plural form. */
  msgstr: string[];
}

export interface MoCatalog {
  /** Header fields (from the entry with empty msgid), e.g. "Content-Type". */
  header: Map<string, string>;
  /** Entries other than the header, in file order. */
  entries: MoEntry[];
}

/** Parse the bytes of a .mo file; errors name the file and the entry. */
export function parseMo(bytes: Uint8Array, file = '<mo>'): MoCatalog {
  const fail = (why: string): Error => new Error(`${file}: ${why}`);
  if (bytes.length < 28) throw fail(`not a .mo file (${bytes.length} bytes, header needs 28)`);
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let le: boolean;
  if (view.getUint32(0, true) === MO_MAGIC) le = true;
  else if (view.getUint32(0, false) === MO_MAGIC) le = false;
  else throw fail(`not a .mo file (magic 0x${view.getUint32(0, true).toString(16)}, expected 0x950412de)`);
  const u32 = (at: number): number => view.getUint32(at, le);
  const revision = u32(4);
  if (revision >>> 16 > 1) throw fail(`unsupported .mo major revision ${revision >>> 16}`);
  const n = u32(8);
  const origTable = u32(12);
  const transTable = u32(16);
  for (const [name, at] of [
    ['msgid', origTable],
    ['msgstr', transTable],
  ] as const) {
    if (at + 8 * n > bytes.length)
      throw fail(`${name} table (${n} entries at offset ${at}) runs past the end (${bytes.length} bytes)`);
  }
  const raw = (table: number, i: number, what: string): Uint8Array => {
    const len = u32(table + 8 * i);
    const off = u32(table + 8 * i + 4);
    if (off + len > bytes.length)
      throw fail(`entry ${i}: ${what} at offset ${off}, length ${len} runs past the end (${bytes.length} bytes)`);
    return bytes.subarray(off, off + len);
  };
  const utf8 = new TextDecoder('utf-8', { fatal: true });
  const decodeWith = (dec: TextDecoder, b: Uint8Array, i: number, what: string): string => {
    try {
      return dec.decode(b);
    } catch {
      throw fail(`entry ${i}: invalid ${dec.encoding} in ${what}`);
    }
  };
  const header = new Map<string, string>();
  let dec = utf8;
  const entries: MoEntry[] = [];
  for (let i = 0; i < n; i++) {
    const idBytes = raw(origTable, i, 'msgid');
    const strBytes = raw(transTable, i, 'msgstr');
    if (idBytes.length === 0) {
      // Header: "Name: value" lines. Its charset (found in an ASCII-safe latin1 reading) decodes
      // every msgstr, the header included (translator names are often in the catalog's charset).
      const charset = /charset=([^\s;]+)/i.exec(new TextDecoder('latin1').decode(strBytes))?.[1];
      if (charset && charset.toUpperCase() !== 'CHARSET') {
        try {
          dec = new TextDecoder(charset, { fatal: true });
        } catch {
          throw fail(`entry ${i}: unsupported charset ${charset}`);
        }
      }
      for (const line of decodeWith(dec, strBytes, i, 'header').split('\n')) {
        const c = line.indexOf(':');
        if (c > 0) header.set(line.slice(0, c).trim(), line.slice(c + 1).trim());
      }
      continue;
    }
    let id = decodeWith(utf8, idBytes, i, 'msgid');
    let context: string | null = null;
    const eot = id.indexOf('\x04');
    if (eot >= 0) {
      context = id.slice(0, eot);
      id = id.slice(eot + 1);
    }
    const forms = id.split('\0');
    entries.push({
      context,
      msgid: forms[0] as string,
      msgidPlural: forms.length > 1 ? (forms[1] as string) : null,
      msgstr: decodeWith(dec, strBytes, i, 'msgstr').split('\0'),
    });
  }
  return { header, entries };
}

export function readMo(file: string): MoCatalog {
  return parseMo(readRegularFile(file, 'text'), file);
}

/** Strip mnemonic accelerators and collapse whitespace (see the header comment for the rules). */
export function cleanMessage(text: string): string {
  let s = text.replace(/\s*\((?:_|&)[\p{L}\p{N}]\)/gu, '');
  s = s.replace(/&&|&(?=[\p{L}\p{N}])(?![\p{L}\p{N}#]+;)/gu, (m) => (m === '&&' ? '&' : ''));
  if (s.indexOf('_') === s.lastIndexOf('_')) s = s.replace(/_(?=[\p{L}\p{N}])/u, '');
  return s.replace(/\s+/gu, ' ').trim();
}

export function wordCount(text: string): number {
  return text === '' ? 0 : text.split(' ').length;
}

export interface GettextOptions {
  /** Target language directory name, e.g. "de" (source is always the English msgid). */
  lang: string;
  /** Default /usr/share/locale. */
  localeDir?: string;
  /** Explicit catalog paths instead of <localeDir>/<lang>/LC_MESSAGES/*.mo. */
  files?: string[];
  /** Fewest / most whitespace-separated words on each side (defaults 3 and 30). */
  minWords?: number;
  maxWords?: number;
  /** Shares of the pairs for validation and test, chosen by a hash of the source (defaults 0.05 each). */
  validFraction?: number;
  testFraction?: number;
}

export interface GettextStats {
  catalogs: number;
  /** Catalogs that could not be parsed, with the reason; they are skipped. */
  failed: string[];
  /** Translated entries read (header excluded). */
  entries: number;
  dropped: { untranslated: number; length: number; identical: number; duplicate: number };
  pairs: number;
}

export interface GettextCorpus {
  train: SentencePair[];
  valid: SentencePair[];
  test: SentencePair[];
  stats: GettextStats;
}

export type Split = 'train' | 'valid' | 'test';

/** Split of a pair, from a hash of its source sentence alone: stable when catalogs are added. */
export function splitOf(src: string, validFraction = 0.05, testFraction = 0.05): Split {
  const h = stableFraction(src);
  return h < validFraction ? 'valid' : h < validFraction + testFraction ? 'test' : 'train';
}

/** The catalog files of one language, sorted by name (empty when the directory does not exist). */
export function catalogFiles(lang: string, localeDir = '/usr/share/locale'): string[] {
  const dir = join(localeDir, lang, 'LC_MESSAGES');
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .filter((f) => f.endsWith('.mo'))
    .sort()
    .map((f) => join(dir, f));
}

/** Build English -> lang pairs from the installed catalogs, filtered, deduplicated and split. */
export function buildGettextCorpus(options: GettextOptions): GettextCorpus {
  const files = options.files ?? catalogFiles(options.lang, options.localeDir);
  const minWords = options.minWords ?? 3;
  const maxWords = options.maxWords ?? 30;
  const stats: GettextStats = {
    catalogs: 0,
    failed: [],
    entries: 0,
    dropped: { untranslated: 0, length: 0, identical: 0, duplicate: 0 },
    pairs: 0,
  };
  const out: GettextCorpus = { train: [], valid: [], test: [], stats };
  const seen = new Set<string>();
  for (const file of files) {
    let catalog: MoCatalog;
    try {
      catalog = readMo(file);
    } catch (e) {
      stats.failed.push((e as Error).message);
      continue;
    }
    stats.catalogs++;
    for (const e of catalog.entries) {
      stats.entries++;
      const src = cleanMessage(e.msgid);
      const tgt = cleanMessage(e.msgstr[0] ?? '');
      if (tgt === '') {
        stats.dropped.untranslated++;
        continue;
      }
      const ns = wordCount(src);
      const nt = wordCount(tgt);
      if (ns < minWords || ns > maxWords || nt < minWords || nt > maxWords) stats.dropped.length++;
      else if (src === tgt) stats.dropped.identical++;
      else {
        const key = src + '\t' + tgt;
        if (seen.has(key)) stats.dropped.duplicate++;
        else {
          seen.add(key);
          out[splitOf(src, options.validFraction, options.testFraction)].push({ src, tgt });
        }
      }
    }
  }
  stats.pairs = seen.size;
  return out;
}
