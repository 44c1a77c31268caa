/**
 * Parts of the attention view drawn only while on screen (issue 34): the across-heads rows and the
 * head view cost more than the thumbnails above them (means, rollout and flow of every layer; an SVG
 * line per head and token pair), so a new snapshot only marks them stale; one on screen is drawn in
 * the same pass as the thumbnails, one scrolled out of view when it comes into view.
 */

interface Part {
  draw: () => void;
  stale: boolean;
}

const parts = new Map<Element, Part>();
const observer =
  typeof IntersectionObserver === 'function'
    ? new IntersectionObserver((entries) => {
        for (const e of entries) if (e.isIntersecting) drawIfStale(e.target);
      })
    : null;

function drawIfStale(el: Element): void {
  const p = parts.get(el);
  if (!p?.stale) return;
  p.stale = false;
  p.draw();
}

/** Registers `el`, drawn by `draw` whenever it is stale and on screen; it starts stale. */
export function lazyPart(el: Element, draw: () => void): void {
  parts.set(el, { draw, stale: true });
  observer?.observe(el);
}

/** Forgets `el` (its DOM was replaced). */
export function dropPart(el: Element): void {
  parts.delete(el);
  observer?.unobserve(el);
}

/** Marks `el` stale: drawn at the next drawVisible, or when it comes into view. */
export function markStale(el: Element): void {
  const p = parts.get(el);
  if (p) p.stale = true;
}

/** Whether any of `el`'s box is in the viewport (an element not rendered has none). */
export function onScreen(el: Element): boolean {
  const r = el.getBoundingClientRect();
  if (r.width === 0 && r.height === 0) return false;
  return r.bottom > 0 && r.right > 0 && r.top < window.innerHeight && r.left < window.innerWidth;
}

/** Draws every stale part now on screen; the others wait for the observer. */
export function drawVisible(): void {
  for (const [el, p] of parts) if (p.stale && onScreen(el)) drawIfStale(el);
}

/** Draws `el` now if it is stale, on screen or not (an export needs what it shows current). */
export function drawNow(el: Element): void {
  drawIfStale(el);
}
