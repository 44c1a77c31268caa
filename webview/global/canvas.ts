/**
 * The Global Q/K view's scatter on a <canvas> of the page's own: plotly's SVG scatter took 3.4 s to
 * draw 30,000 points and 0.3 s a hover, and its WebGL scatter needs eval, which the panels' CSP
 * refuses (bench/README.md). Axes with ticks and titles, queries as filled dots and keys as rings
 * (one path a colour, so 30,000 points are a few dozen fills), a legend, a key of the token
 * colouring's hues (tokenKey.ts) and a colour bar for the position colouring, all in the theme's
 * colours, at the device's pixel ratio. It answers where it drew each point (a hit grid) for the
 * page's hover and click.
 */
import type { GlobalView } from '../../src/protocol/globalView';
import type { Theme } from '../common';
import { type HitGrid, type Scale, hitGrid, linearScale, niceTicks, paddedExtent, tickLabel } from '../lib/scatter';
import { type ColourBy, axisTitle, maxPosition, pointColours, pointsOf, positionScale, tokenColours } from './plot';
import { DOT_RADIUS, paintMarks } from './marks';
import { KEY_DOT, KEY_SWATCH, type KeyPlan, type KeyRow, planTokenKey } from './tokenKey';

/** How near the pointer must come to a point (in CSS pixels) to hover it. */
export const HIT_RADIUS = 8;

/** The plot's box inside the canvas, in CSS pixels. */
export interface Box {
  left: number;
  top: number;
  width: number;
  height: number;
}

/**
 * What was drawn: the plot box, its scales, the points' hit grid and the token key's rows (empty
 * unless coloured by token), in CSS pixels of the canvas.
 */
export interface Painted {
  box: Box;
  x: Scale;
  y: Scale;
  grid: HitGrid;
  key: KeyRow[];
}

/**
 * Draws `view` coloured `by` onto `canvas` at `width` × `height` CSS pixels and `dpr` device pixels
 * each (its backing store is resized to fit).
 */
export function paintScatter(
  canvas: HTMLCanvasElement,
  view: GlobalView,
  by: ColourBy,
  t: Theme,
  width: number,
  height: number,
  dpr: number,
): Painted {
  canvas.width = Math.max(1, Math.round(width * dpr));
  canvas.height = Math.max(1, Math.round(height * dpr));
  const ctx = canvas.getContext('2d')!;
  ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
  ctx.fillStyle = t.bg;
  ctx.fillRect(0, 0, width, height);
  const font = `${t.fontSize - 1}px ${t.font}`;
  ctx.font = font;

  const plotHeight = Math.max(10, height - 76);
  const hues = by === 'token' ? tokenColours(view) : undefined;
  const key = hues && planTokenKey(ctx, [...hues.keys()], plotHeight, t.fontSize, width);
  const bar = by === 'position' ? 70 : key ? key.width : 0;
  const box: Box = { left: 64, top: 30, width: Math.max(10, width - 64 - 16 - bar), height: plotHeight };
  const x = linearScale(paddedExtent(view.points.x), [box.left, box.left + box.width]);
  const y = linearScale(paddedExtent(view.points.y), [box.top + box.height, box.top]);
  drawAxes(ctx, t, box, x, y, [axisTitle(view, 0), axisTitle(view, 1)]);

  // Queries first, keys over them (as plotly's two traces were); one path per colour and role.
  const colours = pointColours(view, by, t, hues);
  const order = [...pointsOf(view, 'q'), ...pointsOf(view, 'k')];
  const px = new Float32Array(order.length);
  const py = new Float32Array(order.length);
  order.forEach((i, j) => {
    px[j] = x(view.points.x[i]!);
    py[j] = y(view.points.y[i]!);
  });
  ctx.save();
  ctx.beginPath();
  ctx.rect(box.left, box.top, box.width, box.height);
  ctx.clip();
  ctx.lineWidth = 1.5;
  for (const role of ['q', 'k'] as const) {
    const groups = new Map<string, number[]>();
    order.forEach((i, j) => {
      if (view.points.role[i] !== role) return;
      const g = groups.get(colours[i]!);
      if (g) g.push(j);
      else groups.set(colours[i]!, [j]);
    });
    for (const [colour, js] of groups) {
      ctx.beginPath();
      for (const j of js) {
        ctx.moveTo(px[j]! + DOT_RADIUS, py[j]!);
        ctx.arc(px[j]!, py[j]!, DOT_RADIUS, 0, 2 * Math.PI);
      }
      paintMarks(ctx, role, colour);
    }
  }
  ctx.restore();

  const legendEnd = drawLegend(ctx, t, box, by);
  const right = box.left + box.width + 14;
  if (by === 'position') drawPositionBar(ctx, t, box, maxPosition(view));
  const rows = key && hues ? drawTokenKey(ctx, t, key, hues, right, box.top) : [];
  if (by !== 'role') sideTitle(ctx, t, by, right - 4, box.top - 12, legendEnd);
  const grid = hitGrid(px, py, order, width, height, HIT_RADIUS);
  return { box, x, y, grid, key: rows };
}

/** Grid lines at the ticks, the frame, the tick labels and the two axis titles. */
function drawAxes(ctx: CanvasRenderingContext2D, t: Theme, box: Box, x: Scale, y: Scale, titles: [string, string]) {
  const xt = niceTicks(x.domain[0], x.domain[1], Math.max(2, Math.floor(box.width / 90)));
  const yt = niceTicks(y.domain[0], y.domain[1], Math.max(2, Math.floor(box.height / 60)));
  ctx.strokeStyle = t.grid;
  ctx.lineWidth = 1;
  ctx.beginPath();
  for (const v of xt) {
    const p = Math.round(x(v)) + 0.5;
    ctx.moveTo(p, box.top);
    ctx.lineTo(p, box.top + box.height);
  }
  for (const v of yt) {
    const p = Math.round(y(v)) + 0.5;
    ctx.moveTo(box.left, p);
    ctx.lineTo(box.left + box.width, p);
  }
  ctx.stroke();
  ctx.strokeRect(box.left + 0.5, box.top + 0.5, box.width - 1, box.height - 1);
  ctx.fillStyle = t.fg;
  ctx.textAlign = 'center';
  ctx.textBaseline = 'top';
  for (const v of xt) ctx.fillText(tickLabel(v, xt), x(v), box.top + box.height + 4);
  ctx.textAlign = 'right';
  ctx.textBaseline = 'middle';
  for (const v of yt) ctx.fillText(tickLabel(v, yt), box.left - 4, y(v));
  ctx.textAlign = 'center';
  ctx.textBaseline = 'bottom';
  ctx.fillText(titles[0], box.left + box.width / 2, box.top + box.height + 40, box.width);
  ctx.save();
  ctx.translate(14, box.top + box.height / 2);
  ctx.rotate(-Math.PI / 2);
  ctx.textBaseline = 'middle';
  ctx.fillText(titles[1], 0, 0, box.height);
  ctx.restore();
}

/**
 * Above the plot: a dot "queries (dots)" and a ring "keys (rings)", in the role colours when coloured
 * by role, and what the colour says. Returns where its text ends.
 */
function drawLegend(ctx: CanvasRenderingContext2D, t: Theme, box: Box, by: ColourBy): number {
  let at = box.left + DOT_RADIUS;
  const mid = box.top - 14;
  ctx.textAlign = 'left';
  ctx.textBaseline = 'middle';
  ctx.lineWidth = 1.5;
  for (const role of ['q', 'k'] as const) {
    const colour = by === 'role' ? (role === 'q' ? t.accent : t.accent2) : t.fg;
    ctx.beginPath();
    ctx.arc(at, mid, KEY_DOT, 0, 2 * Math.PI);
    paintMarks(ctx, role, colour);
    const text = role === 'q' ? 'queries (dots)' : 'keys (rings)';
    ctx.fillStyle = t.fg;
    ctx.fillText(text, at + 8, mid);
    at += 8 + ctx.measureText(text).width + 18;
  }
  const what = by === 'token' ? 'colour: token' : by === 'position' ? 'colour: position' : 'colour: query / key';
  ctx.fillStyle = t.muted;
  ctx.fillText(what, at, mid);
  return at + ctx.measureText(what).width;
}

/**
 * The title over the key or the colour bar (`position`, `token`) at (x, y), where it clears the
 * legend's text, which ends at `legendEnd` (in a narrow panel they share the line: the legend
 * already says what the colour is).
 */
function sideTitle(ctx: CanvasRenderingContext2D, t: Theme, text: string, x: number, y: number, legendEnd: number) {
  if (x < legendEnd + 8) return;
  ctx.textAlign = 'left';
  ctx.textBaseline = 'bottom';
  ctx.fillStyle = t.fg;
  ctx.fillText(text, x, y);
}

/** The position colouring's scale (positionScale) from 0 (bottom) to the last position (top), right of the plot. */
function drawPositionBar(ctx: CanvasRenderingContext2D, t: Theme, box: Box, top: number) {
  const left = box.left + box.width + 14;
  const w = 12;
  const bar = linearScale([0, top], [box.top + box.height, box.top]);
  const scale = positionScale(t);
  for (let p = 0; p < box.height; p++) {
    ctx.fillStyle = `rgb(${scale(1 - p / Math.max(1, box.height - 1)).join(',')})`;
    ctx.fillRect(left, box.top + p, w, 1);
  }
  ctx.strokeStyle = t.grid;
  ctx.lineWidth = 1;
  ctx.strokeRect(left + 0.5, box.top + 0.5, w - 1, box.height - 1);
  const ticks = niceTicks(0, top, Math.max(2, Math.floor(box.height / 50))).filter((v) => v === Math.round(v));
  ctx.fillStyle = t.fg;
  ctx.textAlign = 'left';
  ctx.textBaseline = 'middle';
  for (const v of ticks) ctx.fillText(String(v), left + w + 4, bar(v));
}

/** Draws `plan` from x = `left` down from y = `top`: a token's dot in its hue, then the token; `+N more` muted. */
function drawTokenKey(
  ctx: CanvasRenderingContext2D,
  t: Theme,
  plan: KeyPlan,
  hues: Map<string, string>,
  left: number,
  top: number,
): KeyRow[] {
  ctx.textAlign = 'left';
  ctx.textBaseline = 'middle';
  ctx.lineWidth = 1.5;
  return plan.rows.map((r, j) => {
    const y = top + plan.rowHeight * (j + 0.5);
    const textAt = r.more ? left : left + KEY_SWATCH;
    if (!r.more) {
      ctx.beginPath();
      ctx.arc(left + KEY_DOT, y, KEY_DOT, 0, 2 * Math.PI);
      paintMarks(ctx, 'q', hues.get(r.text)!);
    }
    ctx.fillStyle = r.more ? t.muted : t.fg;
    ctx.fillText(r.drawn, textAt, y);
    return {
      text: r.text,
      drawn: r.drawn,
      more: r.more,
      x: r.more ? left : left + KEY_DOT,
      y,
      end: textAt + r.textWidth,
    };
  });
}
