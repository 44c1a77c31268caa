// Renders the marketplace icon, media/icon.png (128×128 PNG), from the activity-bar glyph
// media/attention.svg: Debian's headless Chromium (playwright-core, as the tests use it) draws the
// SVG on a rounded square in the gallery banner's colour and screenshots it with a transparent
// background. The PNG is committed; run this again after changing the SVG or the colours.
//   node scripts/make-icon.mjs [--out media/icon.png]
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const require = createRequire(import.meta.url);
const repo = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const { launchChromium } = require('../test/vscode/vscodeServer.js');

const SIZE = 128;
const manifest = JSON.parse(readFileSync(join(repo, 'package.json'), 'utf8'));
const background = manifest.galleryBanner?.color ?? '#1f2233';
const ink = '#f5b942';
const i = process.argv.indexOf('--out');
const out = resolve(i >= 0 ? process.argv[i + 1] : join(repo, 'media', 'icon.png'));

const svg = readFileSync(join(repo, 'media', 'attention.svg'), 'utf8').replace(/<!--[\s\S]*?-->/g, '');
const html = `<!doctype html><html><head><style>
  html, body { margin: 0; width: ${SIZE}px; height: ${SIZE}px; background: transparent; }
  .tile { width: ${SIZE}px; height: ${SIZE}px; border-radius: 22px; background: ${background};
          display: flex; align-items: center; justify-content: center; color: ${ink}; }
  .tile svg { width: 92px; height: 92px; }
</style></head><body><div class="tile">${svg}</div></body></html>`;

const browser = await launchChromium({ env: { ...process.env } });
try {
  const page = await browser.newPage({ viewport: { width: SIZE, height: SIZE }, deviceScaleFactor: 1 });
  await page.setContent(html);
  await page.screenshot({ path: out, omitBackground: true, clip: { x: 0, y: 0, width: SIZE, height: SIZE } });
  console.log(`make-icon: ${out} (${SIZE}×${SIZE})`);
} finally {
  await browser.close();
}
