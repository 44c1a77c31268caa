/** Decodes the data: URLs that webviews export (plotly's PNG is base64, its SVG percent-encoded). */
export function dataUrlBytes(url: string): Uint8Array {
  const m = /^data:([^,]*?)(;base64)?,(.*)$/s.exec(url);
  if (!m) throw new Error(`not a data: URL: ${JSON.stringify(url.slice(0, 32))}`);
  return m[2] ? new Uint8Array(Buffer.from(m[3], 'base64')) : new TextEncoder().encode(decodeURIComponent(m[3]));
}
