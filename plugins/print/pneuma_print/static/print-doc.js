// The print document as the viewer reads it: print.json (the format of
// docs/print.md, read by the same rules as paper.py on the server), the
// page document each sheet's frame shows, and what the viewer measures and
// points at inside it. No DOM of the viewer's own here.

export const PRINT_JSON = "print.json";
export const STYLESHEET = "style.css";
// The shell's Noto Sans SC slices: Chinese draws on a machine without CJK
// fonts (docs/viewer-contract.md, "Language", promises this module).
import { CJK_FONT_FAMILY, CJK_FONT_URL, shellHasCjkFont } from "/static/lib/cjk-font.js";

export const CJK_FAMILY = CJK_FONT_FAMILY;
export const CJK_FONT_CSS = CJK_FONT_URL;
export { shellHasCjkFont };
export const PX_PER_MM = 96 / 25.4;
// A custom paper's sides (paper.py's MIN_PAPER_MM, MAX_PAPER_MM).
const MIN_PAPER_MM = 20;
const MAX_PAPER_MM = 2000;
// A page overflows when its content is more than this beyond its box
// (docs/print.md, "Overflow"; render.py's OVERFLOW_TOLERANCE_PX).
export const OVERFLOW_TOLERANCE_PX = 1;

export const PAPERS = {
  A4: [210, 297],
  Letter: [215.9, 279.4],
  Legal: [215.9, 355.6],
  A5: [148, 210],
  B5: [176, 250],
};
const DEFAULT_MARGIN_MM = 18;

export function normalizePath(p) {
  const parts = [];
  for (const part of String(p || "").replace(/\\/g, "/").split("/")) {
    if (!part || part === ".") continue;
    if (part === "..") {
      if (!parts.length) return null;
      parts.pop();
    } else parts.push(part);
  }
  return parts.join("/");
}

const isNumber = (v) => typeof v === "number" && Number.isFinite(v);

function fail(error, key, params = {}) {
  return { ok: false, error, errorKey: key, errorParams: params };
}

function readPaper(value) {
  if (value === undefined) return { name: "A4", size: PAPERS.A4 };
  if (typeof value === "string") {
    const name = Object.keys(PAPERS).find((n) => n.toLowerCase() === value.trim().toLowerCase());
    return name ? { name, size: PAPERS[name] } : null;
  }
  if (value && typeof value === "object" && isNumber(value.width_mm) && isNumber(value.height_mm)) {
    const fits = [value.width_mm, value.height_mm].every((mm) => mm >= MIN_PAPER_MM && mm <= MAX_PAPER_MM);
    return fits ? { name: "custom", size: [value.width_mm, value.height_mm] } : { outOfRange: true };
  }
  return null;
}

function readMargins(value) {
  if (value === undefined) value = DEFAULT_MARGIN_MM;
  if (isNumber(value)) return { top: value, right: value, bottom: value, left: value };
  if (!value || typeof value !== "object") return null;
  const sides = {};
  for (const side of ["top", "right", "bottom", "left"]) {
    const mm = value[side] === undefined ? DEFAULT_MARGIN_MM : value[side];
    if (!isNumber(mm) || mm < 0) return null;
    sides[side] = mm;
  }
  return sides;
}

function readNumbers(value) {
  if (value === undefined) return { show: true, start: 1, skipFirst: true };
  if (typeof value === "boolean") return { show: value, start: 1, skipFirst: true };
  if (!value || typeof value !== "object") return null;
  const show = value.show === undefined ? true : value.show;
  const skipFirst = value.skipFirst === undefined ? true : value.skipFirst;
  const start = value.start === undefined ? 1 : value.start;
  if (typeof show !== "boolean" || typeof skipFirst !== "boolean" || !Number.isInteger(start)) return null;
  return { show, start, skipFirst };
}

function baseName(file) {
  const name = file.split("/").pop() || file;
  return name.replace(/\.[^.]*$/, "");
}

/** print.json's text read into {ok, doc} or {ok: false, error (English), errorKey, errorParams}. */
export function parsePrintJson(text) {
  if (typeof text !== "string") return { ...fail("print.json is missing", "problem.missing"), missing: true };
  let raw;
  try {
    raw = JSON.parse(text);
  } catch (error) {
    return fail(`print.json is not valid JSON: ${error.message}`, "problem.json", { message: error.message });
  }
  if (!raw || typeof raw !== "object" || Array.isArray(raw)) return fail("print.json must hold a JSON object", "problem.object");
  const paper = readPaper(raw.paper);
  if (!paper) return fail(`print.json: unknown "paper" ${JSON.stringify(raw.paper)}`, "problem.paper");
  if (paper.outOfRange) {
    return fail(`print.json: a custom "paper" must be ${MIN_PAPER_MM}–${MAX_PAPER_MM} mm on each side`, "problem.paperRange",
      { min: MIN_PAPER_MM, max: MAX_PAPER_MM });
  }
  const orientation = raw.orientation === undefined ? "portrait" : raw.orientation;
  if (orientation !== "portrait" && orientation !== "landscape") {
    return fail(`print.json: "orientation" must be "portrait" or "landscape"`, "problem.orientation");
  }
  let [width, height] = paper.size;
  if (orientation === "landscape") [width, height] = [height, width];
  const margins = readMargins(raw.margin_mm);
  if (!margins || margins.left + margins.right > width * 0.9 || margins.top + margins.bottom > height * 0.9) {
    return fail(`print.json: "margin_mm" must be a number or {top, right, bottom, left} that leaves room on the page`, "problem.margin");
  }
  const numbers = readNumbers(raw.pageNumbers);
  if (!numbers) return fail(`print.json: "pageNumbers" must be {"show": bool, "start": int, "skipFirst": bool}`, "problem.numbers");
  if (!Array.isArray(raw.pages)) return fail(`print.json: "pages" must be a list of {"file", "title"}`, "problem.pages");
  const pages = [];
  for (const [i, entry] of raw.pages.entries()) {
    const given = typeof entry === "string" ? entry : entry && typeof entry === "object" ? entry.file : null;
    const file = typeof given === "string" ? normalizePath(given) : null;
    if (!file) return fail(`print.json: page ${i + 1} has no "file" inside the workspace`, "problem.pageFile", { page: i + 1 });
    const title = entry && typeof entry.title === "string" && entry.title.trim() ? entry.title.trim() : baseName(file);
    pages.push({ file, title });
  }
  const title = typeof raw.title === "string" ? raw.title.trim() : "";
  return {
    ok: true,
    doc: { title, paper: paper.name, orientation, width, height, margins, numbers, pages },
  };
}

/** "A4", "Letter landscape", "120 × 180 mm": as paper.py's paper_label says it. */
export function paperLabel(doc) {
  if (doc.paper === "custom") return `${round1(doc.width)} × ${round1(doc.height)} mm`;
  return doc.orientation === "landscape" ? `${doc.paper} landscape` : doc.paper;
}

export function contentBox(doc) {
  return {
    width: doc.width - doc.margins.left - doc.margins.right,
    height: doc.height - doc.margins.top - doc.margins.bottom,
  };
}

/** The number the sheet at 1-based `position` prints, or null (paper.py's number_of). */
export function pageNumber(doc, position) {
  const n = doc.numbers;
  if (!n.show || (n.skipFirst && position === 1)) return null;
  return n.start + position - 1;
}

export function round1(value) {
  return Math.round(value * 10) / 10;
}

export const pxToMm = (px) => px / PX_PER_MM;

// Every font-family list ends with the CJK face: Chinese falls through the
// document's own fonts to it when no system font has the glyph.
const FAMILY_DECL = /(font-family\s*:\s*)([^;}<>]*?)(\s*(?:!important\s*)?)(?=[;}]|$)/gi;

export function withCjkFallback(css) {
  return String(css).replace(FAMILY_DECL, (all, prop, value, tail) =>
    value.includes(CJK_FAMILY) || !value.trim() ? all : `${prop}${value}, "${CJK_FAMILY}"${tail}`);
}

/**
 * The document one sheet's frame shows: the stylesheet, the page's
 * fragment, and the content box's rules last (render.py's page document:
 * the page may style its body, not move or resize the box). No scripts
 * run in it: the frame is sandboxed without allow-scripts.
 */
export function pageDocument({ stylesheet, base, cjkFont = true }) {
  return '<!doctype html><html><head><meta charset="utf-8">'
    + `<base href="${base}">`
    + (cjkFont ? `<link rel="stylesheet" href="${CJK_FONT_CSS}">` : "")
    + `<style>html{font-family:serif,"${CJK_FAMILY}"}</style>`
    + `<style id="pneuma-style">${styleText(stylesheet)}</style>`
    + "<style>html{margin:0!important;padding:0!important;width:100%!important;height:100%!important;"
    + "overflow:hidden!important}body{margin:0!important;width:100%!important;height:100%!important;"
    + "box-sizing:border-box!important;overflow:hidden!important}"
    + "[data-pneuma-hover]{outline:1px dashed rgba(91,61,245,.7)!important;outline-offset:1px}"
    + "[data-pneuma-selected]{outline:2px solid #5b3df5!important;outline-offset:1px}"
    + "[data-pneuma-editing]{outline:2px solid #0d9488!important;outline-offset:2px}</style>"
    + "</head><body></body></html>";
}

/** The stylesheet as its frame's <style> holds it: "<" cannot end the element. */
export function styleText(stylesheet) {
  return withCjkFallback(stylesheet).replace(/<\/(style)/gi, "<\\/$1");
}

/** The fragment with its own <style> blocks' families given the CJK face too. */
export function fragmentWithFallback(fragment) {
  return String(fragment).replace(/(<style\b[^>]*>)([\s\S]*?)(<\/style\s*>)/gi,
    (all, open, css, close) => `${open}${withCjkFallback(css)}${close}`);
}

// CJK ideographs, radicals, punctuation, kana and full-width forms: what the
// shell's Noto Sans SC slices are for.
const CJK_CHARS = /[\u2E80-\u9FFF\uF900-\uFAFF\uFE30-\uFE4F\uFF00-\uFFEF]/g;
const PRELOAD_WAIT_MS = 3000;

/** Load the CJK face slices `markup`'s text needs into `doc` (at most a few seconds). */
export async function preloadCjk(doc, markup) {
  const chars = [...new Set(String(markup).replace(/<[^>]*>/g, "").match(CJK_CHARS) || [])].join("");
  if (!chars || !doc.fonts) return;
  let timer;
  await Promise.race([
    doc.fonts.load(`16px "${CJK_FAMILY}"`, chars).catch(() => null),
    new Promise((resolve) => { timer = setTimeout(resolve, PRELOAD_WAIT_MS); }),
  ]);
  clearTimeout(timer);
}

/** How far a page document's content reaches past its box, in px (the overflow rule). */
export function measureBody(doc) {
  const body = doc && doc.body;
  if (!body) return null;
  const overflowX = Math.max(0, body.scrollWidth - body.clientWidth);
  const overflowY = Math.max(0, body.scrollHeight - body.clientHeight);
  // How full the box is: the lowest content edge over the box's height.
  const top = body.getBoundingClientRect().top;
  let bottom = 0;
  for (const el of body.querySelectorAll("*")) {
    if (el.localName === "style" || el.localName === "script") continue;
    const rect = el.getBoundingClientRect();
    if (rect.width || rect.height) bottom = Math.max(bottom, rect.bottom - top);
  }
  const height = body.clientHeight || 1;
  return {
    overflowX,
    overflowY,
    overflows: overflowX > OVERFLOW_TOLERANCE_PX || overflowY > OVERFLOW_TOLERANCE_PX,
    fill: Math.round((Math.max(bottom, body.scrollHeight > body.clientHeight ? body.scrollHeight : 0) / height) * 100),
  };
}

/** "by 12.4 mm at the bottom and 3.0 mm at the right" (sheets.py's describe). */
export function overflowWords(fit) {
  const sides = [];
  if (fit.overflowY > OVERFLOW_TOLERANCE_PX) sides.push(`${pxToMm(fit.overflowY).toFixed(1)} mm at the bottom`);
  if (fit.overflowX > OVERFLOW_TOLERANCE_PX) sides.push(`${pxToMm(fit.overflowX).toFixed(1)} mm at the right`);
  return sides.length ? `by ${sides.join(" and ")}` : "";
}

export function oneLine(text, max = 160) {
  const line = String(text || "").replace(/\s+/g, " ").trim();
  return line.length > max ? `${line.slice(0, max - 1)}…` : line;
}

/** A CSS path from the page's body to `el` (tag, id, :nth-of-type). */
export function cssPath(el) {
  const parts = [];
  let node = el;
  while (node && node.nodeType === 1 && node.localName !== "body" && node.localName !== "html") {
    if (node.id && /^[A-Za-z][\w-]*$/.test(node.id)) {
      parts.unshift(`#${node.id}`);
      break;
    }
    let part = node.localName;
    const parent = node.parentElement;
    if (parent) {
      const same = [...parent.children].filter((c) => c.localName === node.localName);
      if (same.length > 1) part += `:nth-of-type(${same.indexOf(node) + 1})`;
    }
    parts.unshift(part);
    node = parent;
  }
  return parts.length && !parts[0].startsWith("#") ? `body > ${parts.join(" > ")}` : parts.join(" > ");
}

/** What the agent needs to find an element: its tag, classes, path and text. */
export function describeElement(el) {
  return {
    tag: el.localName,
    classes: [...el.classList].filter((c) => !c.startsWith("pneuma")).slice(0, 4),
    selector: cssPath(el),
    text: oneLine(el.textContent, 200),
  };
}

/** A page as drawn: its text, headings and images (get-page, page_report). */
export function pageContents(doc) {
  const body = doc && doc.body;
  if (!body) return { text: "", headings: [], images: [] };
  const headings = [...body.querySelectorAll("h1, h2, h3, h4, h5, h6")]
    .map((h) => ({ level: Number(h.localName[1]), text: oneLine(h.textContent, 200) }));
  const images = [...body.querySelectorAll("img, svg, figure")].map((el) => ({
    tag: el.localName,
    src: el.getAttribute("src") || undefined,
    alt: oneLine(el.getAttribute("alt") || el.getAttribute("aria-label")
      || (el.querySelector && el.querySelector("figcaption") ? el.querySelector("figcaption").textContent : ""), 200),
  }));
  return { text: oneLine(body.innerText || body.textContent, 4000), headings, images };
}
