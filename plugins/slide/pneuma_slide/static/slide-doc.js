// Building, measuring and capturing one slide document.
//
// A slide is an HTML fragment (slides/NN-slug.html). The viewer renders it
// alone in an iframe whose document holds <base href="/content/"> (so
// "assets/x.svg" resolves against the workspace root), a base style sizing
// the canvas, theme.css, and the fragment as the body. Nothing here touches
// the viewer's UI; viewer.js builds on these functions.

export const DEFAULT_SIZE = Object.freeze({ width: 1280, height: 720 });
export const MANIFEST = "manifest.json";
export const THEME = "theme.css";

const UI_STYLE = `
[data-pneuma-hover] { outline: 2px dashed rgba(255, 107, 44, 0.85) !important; outline-offset: 2px !important; }
[data-pneuma-selected] { outline: 3px solid #ff6b2c !important; outline-offset: 3px !important;
  box-shadow: 0 0 0 7px rgba(255, 255, 255, 0.55) !important; }
html.pneuma-pick, html.pneuma-pick * { cursor: pointer !important; }
[data-pneuma-flash] { animation: pneuma-flash 0.45s ease-in-out 3 !important; }
@keyframes pneuma-flash { 50% { outline: 4px solid #ff6b2c; outline-offset: 4px; background-color: rgba(255, 107, 44, 0.18); } }
html.pneuma-pick [data-pneuma-editing] { cursor: text !important; outline: 2px solid #5b3df5 !important;
  outline-offset: 3px !important; box-shadow: 0 0 0 6px rgba(91, 61, 245, 0.15) !important; }
`;

/** The canvas size from the init params (numbers or numeric strings). */
export function slideSize(params) {
  const num = (value, fallback) => {
    const n = Number(value);
    return Number.isFinite(n) && n >= 100 && n <= 8000 ? Math.round(n) : fallback;
  };
  return {
    width: num(params && params.slideWidth, DEFAULT_SIZE.width),
    height: num(params && params.slideHeight, DEFAULT_SIZE.height),
  };
}

/** "./slides/a.html", "/slides/a.html" → "slides/a.html". */
export function normalizePath(path) {
  return String(path || "").trim().replace(/\\/g, "/").replace(/^(\.\/|\/)+/, "");
}

/**
 * Parse manifest.json text: {ok, title, slides: [{file, title}], data, error}.
 * `error` is English, for the agent; `errorKey` and `errorParams` name the
 * same problem for the viewer's own catalogue (i18n.js), for the person.
 */
export function parseManifest(text) {
  if (text == null) {
    return { ok: false, missing: true, title: "", slides: [], data: null, error: "manifest.json does not exist",
      errorKey: "manifest.missing" };
  }
  let data;
  try {
    data = JSON.parse(text);
  } catch (err) {
    return { ok: false, title: "", slides: [], data: null, error: `manifest.json is not valid JSON: ${err.message}`,
      errorKey: "manifest.invalidJson", errorParams: { detail: err.message } };
  }
  if (!data || typeof data !== "object" || Array.isArray(data)) {
    return { ok: false, title: "", slides: [], data: null, error: "manifest.json must hold a JSON object",
      errorKey: "manifest.notObject" };
  }
  if (!Array.isArray(data.slides)) {
    return { ok: false, title: String(data.title || ""), slides: [], data, error: 'manifest.json has no "slides" array',
      errorKey: "manifest.noSlides" };
  }
  const seen = new Set();
  const slides = [];
  for (const entry of data.slides) {
    const file = normalizePath(typeof entry === "string" ? entry : entry && entry.file);
    if (!file || seen.has(file)) continue;
    seen.add(file);
    const title = entry && typeof entry === "object" && entry.title ? String(entry.title) : titleFromPath(file);
    slides.push({ file, title });
  }
  return { ok: true, title: typeof data.title === "string" ? data.title : "", slides, data, error: null };
}

/** Where the deck's slide files live; a file there that manifest.json does not list is "not in the deck". */
export const SLIDE_DIR = "slides/";

export function isSlideFile(path) {
  return path.startsWith(SLIDE_DIR) && /\.html?$/i.test(path);
}

/** A slide's title from its markup: its first heading (or statement), else its file name. */
export function titleFromHtml(html, file) {
  const doc = new DOMParser().parseFromString(String(html || ""), "text/html");
  const heading = doc.querySelector("h1, h2, .statement, h3");
  const text = heading ? heading.textContent.replace(/\s+/g, " ").trim() : "";
  return text || titleFromPath(file);
}

/** The manifest with `entry` appended to its slides; other fields untouched. */
export function appendToManifest(data, entry) {
  const copy = {};
  for (const key of Object.keys(data)) copy[key] = key === "slides" ? [...data.slides, entry] : data[key];
  return copy;
}

export function titleFromPath(file) {
  const stem = file.split("/").pop().replace(/\.html?$/i, "").replace(/^\d+[a-z]?-/, "");
  return stem.replace(/[-_]+/g, " ").replace(/^./, (c) => c.toUpperCase());
}

/** Find the manifest in a file snapshot ([{path, content}] or a Map). */
export function manifestFromFiles(files) {
  let text = null;
  if (files instanceof Map) {
    const entry = files.get(MANIFEST);
    text = entry ? entry.content : null;
  } else if (Array.isArray(files)) {
    const entry = files.find((f) => f && f.path === MANIFEST);
    text = entry ? entry.content : null;
  }
  return parseManifest(text);
}

/**
 * Write the manifest back in the style the seed uses: two-space indentation,
 * each slide entry on one line. Other fields keep their values and order.
 */
export function formatManifest(data) {
  const inline = (value) => JSON.stringify(value, null, 1).replace(/\n\s*/g, " ")
    .replace(/\{ /g, "{").replace(/ \}/g, "}").replace(/\[ /g, "[").replace(/ \]/g, "]");
  const isFlat = (value) => value && typeof value === "object" && !Array.isArray(value)
    && Object.values(value).every((v) => v === null || typeof v !== "object");
  const lines = ["{"];
  const keys = Object.keys(data);
  keys.forEach((key, i) => {
    const comma = i < keys.length - 1 ? "," : "";
    const value = data[key];
    if (key === "slides" && Array.isArray(value) && value.length) {
      lines.push(`  ${JSON.stringify(key)}: [`);
      value.forEach((entry, j) => {
        const text = isFlat(entry) ? inline(entry) : JSON.stringify(entry, null, 2).replace(/\n/g, "\n    ");
        lines.push(`    ${text}${j < value.length - 1 ? "," : ""}`);
      });
      lines.push(`  ]${comma}`);
    } else {
      lines.push(`  ${JSON.stringify(key)}: ${JSON.stringify(value, null, 2).replace(/\n/g, "\n  ")}${comma}`);
    }
  });
  lines.push("}");
  return lines.join("\n") + "\n";
}

/** Reorder the manifest's slide entries to `order` (a list of files); other fields untouched. */
export function reorderManifest(data, order) {
  const entries = Array.isArray(data.slides) ? data.slides.slice() : [];
  const keyOf = (entry) => normalizePath(typeof entry === "string" ? entry : entry && entry.file);
  const byFile = new Map(entries.map((entry) => [keyOf(entry), entry]));
  const result = [];
  for (const file of order) {
    if (byFile.has(file)) {
      result.push(byFile.get(file));
      byFile.delete(file);
    }
  }
  // Entries the order did not mention (duplicates, blanks) stay at the end.
  for (const entry of entries) if (!result.includes(entry) && byFile.has(keyOf(entry))) result.push(entry);
  const copy = {};
  for (const key of Object.keys(data)) copy[key] = key === "slides" ? result : data[key];
  return copy;
}

function escapeStyle(css) {
  return String(css || "").replace(/<\/(style)/gi, "<\\/$1");
}

/** The full HTML document of one slide, for an iframe's srcdoc. */
export function buildSlideHtml({ fragment, theme, width, height, base = "/content/", ui = true }) {
  return [
    "<!doctype html>",
    '<html lang="en"><head><meta charset="utf-8">',
    base ? `<base href="${base}">` : "",
    `<style id="pneuma-base">html,body{margin:0;padding:0;width:${width}px;height:${height}px;overflow:hidden}</style>`,
    `<style id="pneuma-theme">${escapeStyle(theme)}</style>`,
    ui ? `<style id="pneuma-ui">${UI_STYLE}</style>` : "",
    "</head><body>",
    fragment || "",
    "</body></html>",
  ].join("");
}

/** Resolve after `ms`, or earlier when `promise` settles. */
export function within(promise, ms) {
  return Promise.race([promise, new Promise((resolve) => setTimeout(resolve, ms))]);
}

/** Wait until a slide document's fonts and images have settled. */
export async function settle(doc, ms = 4000) {
  const images = Array.from(doc.images || []).filter((img) => !img.complete).map(
    (img) => new Promise((resolve) => {
      img.addEventListener("load", resolve, { once: true });
      img.addEventListener("error", resolve, { once: true });
    }),
  );
  await within(Promise.all([doc.fonts ? doc.fonts.ready : null, ...images]), ms);
  await new Promise((resolve) => setTimeout(resolve, 30));
}

// ---- Selectors ---------------------------------------------------------------

const SKIP_CLASSES = /^(pneuma-|is-pneuma)/;

function classesOf(el) {
  return Array.from(el.classList || []).filter((c) => !SKIP_CLASSES.test(c));
}

function cssIdent(value) {
  return typeof CSS !== "undefined" && CSS.escape ? CSS.escape(value) : value.replace(/[^\w-]/g, "\\$&");
}

/**
 * A short CSS selector for `el` within its slide document, starting at the
 * slide's root: "section.slide > div.slide__body > ul.bullets > li:nth-child(2)".
 */
export function selectorFor(el) {
  const doc = el.ownerDocument;
  const body = doc.body;
  if (!el || el === body || el === doc.documentElement) return "body";
  const parts = [];
  let node = el;
  while (node && node !== body && node.nodeType === 1) {
    const tag = node.localName;
    if (node.id) {
      parts.unshift(`${tag}#${cssIdent(node.id)}`);
      break;
    }
    let classes = classesOf(node);
    if (node.parentElement === body && classes.includes("slide")) classes = ["slide"];
    let step = tag + classes.map((c) => "." + cssIdent(c)).join("");
    const parent = node.parentElement;
    if (parent) {
      const same = Array.from(parent.children).filter((sib) => {
        try { return sib.matches(step); } catch { return false; }
      });
      if (same.length > 1) step += `:nth-child(${Array.from(parent.children).indexOf(node) + 1})`;
    }
    parts.unshift(step);
    node = parent;
  }
  return parts.join(" > ");
}

/** The visible text of an element, collapsed and shortened. */
export function shortText(el, max = 80) {
  const text = String((el && (el.innerText || el.textContent)) || "").replace(/\s+/g, " ").trim();
  return text.length > max ? text.slice(0, max - 1).trimEnd() + "…" : text;
}

/** What the viewer reports about a selected element. */
export function describeElement(el) {
  return {
    selector: selectorFor(el),
    tag: el.localName,
    classes: classesOf(el),
    text: shortText(el),
  };
}

// ---- Measuring ---------------------------------------------------------------

const NOT_CONTENT = new Set(["style", "script", "template", "br", "wbr", "head", "title", "meta", "link", "base"]);

/**
 * Measure how far the rendered content of a slide document reaches past the
 * canvas (0,0 to width×height). Element boxes and text lines are compared
 * with the canvas, not scrollHeight, so content hidden by overflow:hidden or
 * squeezed out of a shrunken flex box still counts. Returns
 * {fits, overflowX, overflowY, elements: [{selector, text, overflow: {top?, right?, bottom?, left?}}]}
 * listing the outermost elements that stick out.
 */
export function measureOverflow(doc, width, height, tolerance = 1) {
  const win = doc.defaultView;
  const found = new Map(); // element → {top, right, bottom, left}
  const note = (el, rect) => {
    if (!rect || (rect.width === 0 && rect.height === 0)) return;
    const sides = {
      top: -rect.top,
      right: rect.right - width,
      bottom: rect.bottom - height,
      left: -rect.left,
    };
    if (!Object.values(sides).some((v) => v > tolerance)) return;
    const prev = found.get(el) || { top: 0, right: 0, bottom: 0, left: 0 };
    for (const side of Object.keys(sides)) prev[side] = Math.max(prev[side], sides[side]);
    found.set(el, prev);
  };
  const hidden = (el) => {
    const style = win.getComputedStyle(el);
    return style.display === "none" || style.visibility === "hidden" || style.visibility === "collapse";
  };
  const walk = (el) => {
    for (const child of el.children) {
      if (NOT_CONTENT.has(child.localName) || hidden(child)) continue;
      note(child, child.getBoundingClientRect());
      walk(child);
    }
  };
  walk(doc.body);
  // Text lines: a line can stick out of a box that itself stays inside.
  const texts = doc.createTreeWalker(doc.body, 4 /* SHOW_TEXT */);
  const range = doc.createRange();
  for (let node = texts.nextNode(); node; node = texts.nextNode()) {
    if (!node.nodeValue.trim()) continue;
    const parent = node.parentElement;
    if (!parent || NOT_CONTENT.has(parent.localName) || hidden(parent)) continue;
    range.selectNodeContents(node);
    for (const rect of range.getClientRects()) note(parent, rect);
  }
  // Report the outermost elements; their figures cover what is inside them.
  const outer = [];
  for (const [el, sides] of found) {
    let up = el.parentElement;
    let covered = false;
    while (up && up !== doc.body) {
      if (found.has(up)) { covered = true; const o = found.get(up); for (const s of Object.keys(sides)) o[s] = Math.max(o[s], sides[s]); }
      up = up.parentElement;
    }
    if (!covered) outer.push(el);
  }
  let overflowX = 0;
  let overflowY = 0;
  const elements = outer.map((el) => {
    const sides = found.get(el);
    const overflow = {};
    for (const side of ["top", "right", "bottom", "left"]) {
      const v = Math.ceil(sides[side]);
      if (sides[side] > tolerance) overflow[side] = v;
    }
    overflowX = Math.max(overflowX, overflow.left || 0, overflow.right || 0);
    overflowY = Math.max(overflowY, overflow.top || 0, overflow.bottom || 0);
    return { selector: selectorFor(el), text: shortText(el, 60), overflow };
  });
  return { fits: elements.length === 0, overflowX, overflowY, elements };
}

/** Relative asset paths (img, source, inline-SVG image) a slide refers to. */
export function assetRefs(doc) {
  const refs = new Set();
  const add = (value) => {
    if (!value) return;
    const v = value.trim();
    if (!v || /^(data:|blob:|#|[a-z][a-z0-9+.-]*:)/i.test(v) || v.startsWith("//")) return;
    refs.add(normalizePath(v.split("#")[0].split("?")[0]));
  };
  for (const el of doc.querySelectorAll("img[src], source[src], video[src], audio[src], video[poster]")) {
    add(el.getAttribute("src"));
    add(el.getAttribute("poster"));
  }
  for (const el of doc.querySelectorAll("image")) add(el.getAttribute("href") || el.getAttribute("xlink:href"));
  for (const el of doc.querySelectorAll("[style]")) {
    for (const m of el.getAttribute("style").matchAll(/url\(\s*(['"]?)([^'")]+)\1\s*\)/g)) add(m[2]);
  }
  refs.delete("");
  return Array.from(refs);
}

// ---- Capturing ----------------------------------------------------------------

function blobToDataUrl(blob) {
  return new Promise((resolve, reject) => {
    const reader = new FileReader();
    reader.onload = () => resolve(reader.result);
    reader.onerror = () => reject(reader.error);
    reader.readAsDataURL(blob);
  });
}

async function toDataUrl(url, cache) {
  if (!url || /^data:/i.test(url)) return url;
  if (cache.has(url)) return cache.get(url);
  const job = fetch(url, { credentials: "same-origin" })
    .then((res) => (res.ok ? res.blob() : null))
    .then((blob) => (blob ? blobToDataUrl(blob) : url))
    .catch(() => url);
  cache.set(url, job);
  return job;
}

async function inlineCssUrls(css, baseUrl, cache) {
  const matches = Array.from(String(css).matchAll(/url\(\s*(['"]?)([^'")]+)\1\s*\)/g));
  let out = css;
  for (const m of matches) {
    if (/^(data:|#)/i.test(m[2])) continue;
    const data = await toDataUrl(new URL(m[2], baseUrl).href, cache);
    out = out.split(m[0]).join(`url("${data}")`);
  }
  return out;
}

/**
 * A PNG data URL of a rendered slide document: its body, with images and
 * CSS url()s inlined, drawn through an SVG <foreignObject> onto a canvas.
 */
export async function captureDocument(doc, { width, height, theme, scale = 1 }) {
  const base = doc.baseURI;
  const cache = new Map();
  const body = doc.body.cloneNode(true);
  for (const el of body.querySelectorAll("[data-pneuma-hover],[data-pneuma-selected]")) {
    el.removeAttribute("data-pneuma-hover");
    el.removeAttribute("data-pneuma-selected");
  }
  for (const el of body.querySelectorAll("script")) el.remove();
  const jobs = [];
  for (const el of body.querySelectorAll("img[src]")) {
    jobs.push(toDataUrl(new URL(el.getAttribute("src"), base).href, cache).then((d) => el.setAttribute("src", d)));
    el.removeAttribute("srcset");
    el.removeAttribute("loading");
  }
  for (const el of body.querySelectorAll("image")) {
    const href = el.getAttribute("href") || el.getAttribute("xlink:href");
    if (href && !href.startsWith("#")) {
      jobs.push(toDataUrl(new URL(href, base).href, cache).then((d) => el.setAttribute("href", d)));
    }
  }
  for (const el of body.querySelectorAll("[style]")) {
    const style = el.getAttribute("style");
    if (style.includes("url(")) jobs.push(inlineCssUrls(style, base, cache).then((s) => el.setAttribute("style", s)));
  }
  for (const el of body.querySelectorAll("style")) {
    if (el.textContent.includes("url(")) jobs.push(inlineCssUrls(el.textContent, base, cache).then((s) => { el.textContent = s; }));
  }
  await Promise.all(jobs);
  const themeCss = await inlineCssUrls(theme || "", new URL("theme.css", base).href, cache);
  const css = `html,body{margin:0;padding:0;width:${width}px;height:${height}px;overflow:hidden;display:block}\n${themeCss}`;
  const xhtml = new XMLSerializer().serializeToString(body);
  const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}">`
    + `<style><![CDATA[${css.split("]]>").join("]]]]><![CDATA[>")}]]></style>`
    + `<foreignObject x="0" y="0" width="${width}" height="${height}">`
    + `<html xmlns="http://www.w3.org/1999/xhtml">${xhtml}</html>`
    + "</foreignObject></svg>";
  const img = new Image();
  img.decoding = "sync";
  const loaded = new Promise((resolve, reject) => {
    img.onload = resolve;
    img.onerror = () => reject(new Error("the slide could not be drawn as an image"));
  });
  img.src = "data:image/svg+xml;charset=utf-8," + encodeURIComponent(svg);
  await loaded;
  await new Promise((resolve) => setTimeout(resolve, 50));
  const canvas = document.createElement("canvas");
  canvas.width = Math.round(width * scale);
  canvas.height = Math.round(height * scale);
  const g = canvas.getContext("2d");
  g.scale(scale, scale);
  g.drawImage(img, 0, 0, width, height);
  return canvas.toDataURL("image/png");
}
