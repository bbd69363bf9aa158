// Chinese on the stage on a machine without a CJK font: the shell's Noto
// Sans SC slices (scripts/build-web puts them under /static/vendor/cjk-font/).
// A scene's frame is an opaque origin that cannot load them from this server,
// so the player fetches the slices a scene's text needs and hands them to the
// stage as data: URLs, under the family names "Noto Sans SC" and "Pneuma Noto
// Sans SC", each clipped to CJK code points so it never draws Latin text. A
// scene asks for them by naming either family in its font-family list (the
// skill says so); on a machine that has Noto Sans SC it is the same font.

import { dataUrl } from "./data-url.js";

const CSS_URL = "/static/vendor/cjk-font/noto-sans-sc.css";
const CJK_START = 0x2e80;
const FAMILIES = ["Noto Sans SC", "Pneuma Noto Sans SC"];
let faces = null; // Promise of [{url, ranges: [[low, high]]}]

function parseFaces(css) {
  const found = [];
  for (const match of css.matchAll(/@font-face\s*\{([^}]*)\}/g)) {
    const src = /url\(\s*['"]?([^'")]+)['"]?\s*\)/.exec(match[1]);
    const range = /unicode-range\s*:\s*([^;}]*)/.exec(match[1]);
    if (!src || !range) continue;
    const ranges = range[1].split(",").map((part) => {
      const [low, high] = part.trim().toUpperCase().replace(/^U\+/, "").split("-");
      const start = Math.max(parseInt(low, 16), CJK_START);
      const end = parseInt(high || low, 16);
      return Number.isFinite(start) && Number.isFinite(end) && start <= end ? [start, end] : null;
    }).filter(Boolean);
    if (ranges.length) found.push({ url: new URL(src[1], new URL(CSS_URL, location.href)).href, ranges });
  }
  return found;
}

/** The @font-face rules for the CJK characters of `text` ("" when it has
 * none, or when the shell's font is not installed). */
export async function cjkFontFaces(text) {
  const wanted = new Set();
  for (const ch of String(text)) if (ch.codePointAt(0) >= CJK_START) wanted.add(ch.codePointAt(0));
  if (!wanted.size) return "";
  faces ||= fetch(CSS_URL, { credentials: "same-origin" })
    .then((response) => (response.ok ? response.text() : ""))
    .then(parseFaces, () => []);
  const needed = (await faces).filter((face) => face.ranges.some(([low, high]) => [...wanted].some((p) => p >= low && p <= high)));
  const rules = await Promise.all(needed.map(async (face) => {
    let src;
    try {
      src = await dataUrl(face.url);
    } catch {
      return "";
    }
    const range = face.ranges.map(([low, high]) => (low === high ? `U+${low.toString(16)}` : `U+${low.toString(16)}-${high.toString(16)}`)).join(",");
    return FAMILIES.map((family) => `@font-face{font-family:"${family}";font-style:normal;font-weight:100 900;`
      + `src:url(${src}) format("woff2");unicode-range:${range};}`).join("\n");
  }));
  return rules.filter(Boolean).join("\n");
}
