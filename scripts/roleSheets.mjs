// Sheets for labelling head roles by eye over the whole probe batch (scripts/role-agreement.mjs
// --sheets): one PNG a head, its attention on each of the run's probe pairs (the pairs telemetry, and
// so the role rules, average over) at the newest checkpoint, tokens on both axes. Nothing else is
// drawn: no statistic and no rule's label, so that the labels given from them are the eye's.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { canvas, drawText, encodeApng, fillRect, textWidth } from './apng.mjs';

const CELL = 15;
const COLUMNS = 8;
const GREY = [0xcc, 0xcc, 0xcc];
const SHORT = { encoder_self: 'enc', decoder_self: 'dec', cross: 'cross' };

/** A token in at most two characters: BOS and EOS as B and E (a sheet's title says so). */
const short = (t) => ({ '<s>': 'B', '</s>': 'E' })[t] ?? t.slice(0, 2);

/** One pair's [Q, K] map with its key tokens above and its query tokens on the left. */
function drawMap(c, x, y, weights, keys, queries, viridis) {
  const left = 4 + Math.max(...queries.map((t) => textWidth(short(t), 1)));
  keys.forEach((t, k) => drawText(c, short(t), x + left + k * CELL + 2, y, 1, GREY));
  queries.forEach((t, q) => drawText(c, short(t), x, y + 9 + q * CELL + 3, 1, GREY));
  for (let q = 0; q < queries.length; q++)
    for (let k = 0; k < keys.length; k++)
      fillRect(c, x + left + k * CELL, y + 9 + q * CELL, CELL - 1, CELL - 1, viridis(weights[q * keys.length + k]));
}

/**
 * A head's maps over every pair, COLUMNS to a row. pairs: [{src, tgt, maps}] (token labels, and the
 * maps of attentionOfPairs); head: {kind, layer, head}.
 */
function headSheet(pairs, head, viridis) {
  const longest = Math.max(...pairs.flatMap((p) => [p.src.length, p.tgt.length]));
  const box = 24 + longest * CELL + 12;
  const rows = Math.ceil(pairs.length / COLUMNS);
  const c = canvas(16 + COLUMNS * box, 40 + rows * (box + 4), [0x1e, 0x1e, 0x1e]);
  const name = `${SHORT[head.kind]}:${head.layer}.${head.head}`;
  drawText(c, `${name}: ${pairs.length} pairs (keys across, queries down, B = <s>, E = </s>)`, 8, 8, 2, GREY);
  pairs.forEach((p, b) => {
    const m = p.maps.find((x) => x.kind === head.kind);
    const [, H, Q, K] = m.shape;
    const at = (head.layer * H + head.head) * Q * K;
    const keys = head.kind === 'decoder_self' ? p.tgt : p.src;
    const queries = head.kind === 'encoder_self' ? p.src : p.tgt;
    const x = 8 + (b % COLUMNS) * box;
    const y = 40 + Math.floor(b / COLUMNS) * (box + 4);
    drawMap(c, x, y, m.weights.subarray(at, at + Q * K), keys, queries, viridis);
  });
  return c;
}

/** Writes DIR/<kind>-<layer>.<head>.png for every head of the pairs' maps; returns the files. */
export function writeHeadSheets(pairs, dir, viridis) {
  mkdirSync(dir, { recursive: true });
  const files = [];
  for (const m of pairs[0].maps) {
    const [L, H] = m.shape;
    for (let layer = 0; layer < L; layer++)
      for (let head = 0; head < H; head++) {
        const file = join(dir, `${m.kind}-${layer}.${head}.png`);
        const sheet = headSheet(pairs, { kind: m.kind, layer, head }, viridis);
        writeFileSync(file, encodeApng([sheet], [1000]));
        files.push(file);
      }
  }
  return files;
}
