// The webcraft mode's viewer: the site's pages live, one tab per HTML page,
// at a phone, tablet or desktop width or all three side by side.
//
// Isolation (docs/security.md): a page is workspace content, so it never
// runs where it could reach Pneuma's API. The viewer builds each page into
// one self-contained document (its stylesheets, scripts and images inlined
// from the files the shell already holds) and shows it in a
// frame sandboxed with allow-scripts only, served by this mode's route with
// the sandbox policy of workspace content (routes.py): an opaque origin that
// the server refuses, and no shell policy (so the page's own scripts run).
// A small bridge script (bridge.js) runs first in the page and talks to the viewer with postMessage: console errors, the picked element,
// scroll position, link clicks; describe, scroll-to and axe-core on request.
//
// Reloads: the build records the workspace files it used, and only a change
// to one of them rebuilds the page, which then loads underneath the one on
// show and replaces it once painted (PreviewFrame), so it never blinks.

import { h, sharedStylesheet } from "/static/lib/viewer-helpers.js";
import { translator } from "./i18n.js";

const MODE = "webcraft";
const CSS_URL = new URL("./viewer.css", import.meta.url).href;
const BRIDGE_URL = new URL("./bridge.js", import.meta.url).href;
const FRAMES_URL = "/api/webcraft/frames";
const AXE_URL = new URL("./vendor/axe.min.js", import.meta.url).href;
const VIEWPORTS = { phone: 390, tablet: 820, desktop: 1280 };
const VIEWPORT_HEIGHT = { phone: 844, tablet: 1180, desktop: 800 };
const ORDER = ["phone", "tablet", "desktop"];
const HIDDEN_PREFIXES = [".pneuma/", ".claude/", ".git/", "node_modules/", "exports/"];
const NAV_WAIT_MS = 2500; // how long navigate-to waits for a page that is still being written
const REPLY_TIMEOUT_MS = 20000;
const MAX_ERRORS = 200;
const MIME = {
  png: "image/png", jpg: "image/jpeg", jpeg: "image/jpeg", gif: "image/gif", webp: "image/webp",
  avif: "image/avif", ico: "image/x-icon", svg: "image/svg+xml", woff: "font/woff", woff2: "font/woff2",
  ttf: "font/ttf", otf: "font/otf", json: "application/json", css: "text/css", js: "text/javascript",
};

const stylesheet = sharedStylesheet(CSS_URL, { "data-pneuma-webcraft": "" });
let bridgePromise = null;
let axePromise = null;
const fetchText = (url) => fetch(url, { credentials: "same-origin" }).then((r) => {
  if (!r.ok) throw new Error(`${url}: HTTP ${r.status}`);
  return r.text();
});

// --- paths --------------------------------------------------------------------------

function isPage(path) {
  return /\.html?$/i.test(path) && !HIDDEN_PREFIXES.some((p) => path.startsWith(p) || path.includes("/" + p));
}

function pagesOf(files) {
  return files.map((f) => f.path).filter(isPage)
    .sort((a, b) => (a !== "index.html") - (b !== "index.html") || a.split("/").length - b.split("/").length || a.localeCompare(b));
}

function normalizePath(path) {
  const out = [];
  for (const part of String(path).replace(/\\/g, "/").split("/")) {
    if (part === "" || part === ".") continue;
    if (part === "..") {
      if (!out.length) return null;
      out.pop();
    } else out.push(part);
  }
  return out.join("/");
}

const dirname = (path) => (path.includes("/") ? path.slice(0, path.lastIndexOf("/")) : "");
const isExternal = (url) => /^([a-z][a-z0-9+.-]*:|\/\/)/i.test(url);

function resolveRef(from, ref) {
  const clean = ref.split(/[?#]/)[0];
  if (!clean || isExternal(ref) || ref.startsWith("#")) return null;
  return normalizePath(clean.startsWith("/") ? clean.slice(1) : `${dirname(from)}/${clean}`);
}

const escapeAttr = (s) => String(s).replace(/&/g, "&amp;").replace(/"/g, "&quot;").replace(/</g, "&lt;");

// --- building a self-contained page -------------------------------------------------

// The bridge's name in stack traces, so that it is never taken for the page's code.
const BRIDGE_SOURCE = "pneuma-webcraft-bridge.js";
// Script types the browser runs as JavaScript; other <script>s are data the page reads.
const JS_TYPES = new Set(["", "module", "text/javascript", "application/javascript", "application/ecmascript",
  "text/ecmascript", "application/x-javascript", "text/jscript"]);

/** A file's code as the body of an inline script; sourceURL keeps its name
 * in error reports and stacks. `lead` is what goes before it (for an inline
 * script: newlines and spaces that put its first character at the line and
 * column it has in the HTML file, so errors count lines as the file does). */
function inlineScript(code, path, lead = "") {
  // A closing tag inside the code would end the inline element early.
  return lead + code.replace(/<\/script/gi, "<\\/script") + "\n//# sourceURL=" + encodeURI(path);
}

/** The bridge, preceded by its configuration (bridge.js reads WEBCRAFT_CONFIG). */
function bootScript(config, bridge) {
  return "const WEBCRAFT_CONFIG = " + JSON.stringify(config).replace(/</g, "\\u003c") + ";\n" + bridge
    + "\n//# sourceURL=" + BRIDGE_SOURCE;
}

/** Where each inline script's code starts in the page's source, {line,
 * column} 1-based (null when not found), in the order given. The parser
 * keeps a script's text verbatim (after folding CRLF to LF), so the first
 * occurrence after the previous script that is followed by </script> (or the
 * end of the file) is this script's. */
function inlineScriptStarts(source, codes) {
  const text = source.replace(/\r\n?/g, "\n");
  let cursor = 0;
  return codes.map((code) => {
    if (!code) return null;
    let at = text.indexOf(code, cursor);
    while (at >= 0 && at + code.length < text.length && !/^<\/script/i.test(text.slice(at + code.length, at + code.length + 8))) {
      at = text.indexOf(code, at + 1);
    }
    if (at < 0) return null;
    cursor = at + code.length;
    const lineStart = text.lastIndexOf("\n", at - 1) + 1;
    let line = 1;
    for (let i = text.indexOf("\n"); i >= 0 && i < at; i = text.indexOf("\n", i + 1)) line++;
    return { line, column: at - lineStart + 1 };
  });
}

/** A srcset attribute's candidates, [{url, descriptor}], split as the HTML
 * standard does (a URL runs to whitespace; trailing commas end it). */
function parseSrcset(value) {
  const s = String(value);
  const out = [];
  let i = 0;
  while (i < s.length) {
    while (i < s.length && /[\s,]/.test(s[i])) i++;
    if (i >= s.length) break;
    const start = i;
    while (i < s.length && !/\s/.test(s[i])) i++;
    let url = s.slice(start, i);
    let descriptor = "";
    if (url.endsWith(",")) url = url.replace(/,+$/, "");
    else {
      const from = i;
      let depth = 0;
      while (i < s.length && (s[i] !== "," || depth > 0)) {
        if (s[i] === "(") depth++;
        else if (s[i] === ")") depth = Math.max(0, depth - 1);
        i++;
      }
      descriptor = s.slice(from, i).trim();
    }
    if (url) out.push({ url, descriptor });
  }
  return out;
}

// In CSS: an @import (url() or a string) or any other url().
const CSS_REF = /@import\s+(?:url\(\s*(["']?)([^"')]+)\1\s*\)|(["'])([^"']+)\3)|url\(\s*(["']?)([^"')]+)\5\s*\)/gi;
const MAX_IMPORT_DEPTH = 8;

class PageBuilder {
  constructor(ctx) {
    this.ctx = ctx;
    this.dataUrls = new Map(); // path -> the promise of its data: URL, for binary files
  }

  forget(paths) {
    for (const p of paths) this.dataUrls.delete(p);
  }

  file(files, path) {
    return files.find((f) => f.path === path);
  }

  /** A workspace file as a data: URL, or null (then it is in `job.missing`).
   * Either way it is one of the files the page uses. */
  async dataUrl(files, path, job) {
    job.uses.add(path);
    const entry = this.file(files, path);
    if (!entry) {
      job.missing.add(path);
      return null;
    }
    const ext = path.split(".").pop().toLowerCase();
    const mime = MIME[ext] || "application/octet-stream";
    if (!entry.binary && typeof entry.content === "string") {
      return `data:${mime};charset=utf-8,${encodeURIComponent(entry.content)}`;
    }
    if (!this.dataUrls.has(path)) {
      this.dataUrls.set(path, fetch(this.ctx.contentUrl(path), { credentials: "same-origin" })
        .then((r) => (r.ok ? r.blob() : Promise.reject(new Error(String(r.status)))))
        .then((blob) => new Promise((resolve, reject) => {
          const reader = new FileReader();
          reader.onload = () => resolve(String(reader.result).replace(/^data:[^;,]*/, `data:${mime}`));
          reader.onerror = () => reject(reader.error);
          reader.readAsDataURL(blob);
        })));
    }
    try {
      return await this.dataUrls.get(path);
    } catch {
      this.dataUrls.delete(path);
      job.missing.add(path);
      return null;
    }
  }

  /** CSS text of the file `from` with its url()s as data: URLs and its
   * @imports as data: URLs of the imported sheets, built the same way (so
   * their own url()s resolve against their own folder). One pass over the
   * original text: a replacement is never scanned again. */
  async css(files, from, text, job, depth = 0) {
    let out = "";
    let last = 0;
    for (const match of text.matchAll(CSS_REF)) {
      const importRef = match[2] ?? match[4];
      const ref = (importRef ?? match[6]).trim();
      const path = resolveRef(from, ref);
      let replacement = null;
      if (path && importRef !== undefined) {
        job.uses.add(path);
        const entry = this.file(files, path);
        if (!entry) job.missing.add(path);
        else if (depth < MAX_IMPORT_DEPTH) {
          const sheet = await this.css(files, path, entry.content || "", job, depth + 1);
          replacement = `@import url("data:text/css;charset=utf-8,${encodeURIComponent(sheet)}")`;
        }
      } else if (path) {
        const url = await this.dataUrl(files, path, job);
        if (url) replacement = `url("${url}")`;
      }
      if (replacement === null) continue;
      out += text.slice(last, match.index) + replacement;
      last = match.index + match[0].length;
    }
    return out + text.slice(last);
  }

  /** srcset's candidates, [[url, descriptor]], local files as data: URLs
   * (the frame has no origin the server would answer); a missing file's
   * candidate is left out. They go to the bridge, not into srcset: Chromium
   * treats a data: candidate as already cached and so always shows the
   * largest one, so the bridge turns them into blob: URLs of the frame's own
   * before the browser picks (bridge.js, "srcset"). */
  async srcset(files, page, value, job) {
    const kept = [];
    for (const { url, descriptor } of parseSrcset(value)) {
      const path = resolveRef(page, url);
      const target = path ? await this.dataUrl(files, path, job) : url;
      if (target) kept.push([target, descriptor]);
    }
    return kept;
  }

  /** The page as one HTML string that needs nothing from the server, the
   * local files it referred to that do not exist, and every workspace file
   * the result depends on (the page itself included): a change to any
   * other file leaves the preview as it is. */
  async build(files, page, config) {
    const job = { missing: new Set(), uses: new Set([page]) };
    const source = this.file(files, page)?.content ?? "";
    const doc = new DOMParser().parseFromString(source, "text/html");
    const inline = [...doc.querySelectorAll("script:not([src])")];
    const starts = inlineScriptStarts(source, inline.map((s) => s.textContent));
    inline.forEach((script, i) => {
      const type = (script.getAttribute("type") || "").trim().toLowerCase();
      if (!starts[i] || !JS_TYPES.has(type)) return;
      const { line, column } = starts[i];
      script.textContent = inlineScript(script.textContent, page, "\n".repeat(line - 1) + " ".repeat(column - 1));
    });
    for (const link of doc.querySelectorAll('link[rel~="stylesheet"][href]')) {
      const path = resolveRef(page, link.getAttribute("href"));
      if (!path) continue;
      job.uses.add(path);
      const entry = this.file(files, path);
      if (!entry) { job.missing.add(path); continue; }
      const style = doc.createElement("style");
      style.setAttribute("data-webcraft-href", path);
      for (const attr of ["media", "title"]) if (link.hasAttribute(attr)) style.setAttribute(attr, link.getAttribute(attr));
      style.textContent = await this.css(files, path, entry.content || "", job);
      link.replaceWith(style);
    }
    for (const style of doc.querySelectorAll("style:not([data-webcraft-href])")) {
      style.textContent = await this.css(files, page, style.textContent, job);
    }
    for (const script of doc.querySelectorAll("script[src]")) {
      const path = resolveRef(page, script.getAttribute("src"));
      if (!path) continue;
      job.uses.add(path);
      const entry = this.file(files, path);
      script.removeAttribute("src");
      if (!entry) { job.missing.add(path); continue; }
      script.setAttribute("data-webcraft-src", path);
      script.textContent = inlineScript(entry.content || "", path);
    }
    for (const el of doc.querySelectorAll("[src], [poster], link[rel~='icon'][href], image[href]")) {
      for (const attr of ["src", "poster", "href"]) {
        const value = el.getAttribute(attr);
        const path = value && resolveRef(page, value);
        if (!path || (attr === "href" && el.tagName === "A")) continue;
        const url = await this.dataUrl(files, path, job);
        if (url) el.setAttribute(attr, url);
        else {
          // Reported as a missing file; left as it was, it would be fetched
          // from the frame's URL on the server (and fail there too).
          el.removeAttribute(attr);
          el.setAttribute(`data-webcraft-missing-${attr}`, value);
        }
      }
    }
    for (const el of doc.querySelectorAll("img[srcset], source[srcset]")) {
      el.setAttribute("data-webcraft-srcset", JSON.stringify(await this.srcset(files, page, el.getAttribute("srcset"), job)));
      el.removeAttribute("srcset");
    }
    for (const el of doc.querySelectorAll("[style]")) {
      if (/url\(/i.test(el.getAttribute("style"))) el.setAttribute("style", await this.css(files, page, el.getAttribute("style"), job));
    }
    const bridge = await (bridgePromise ??= fetchText(BRIDGE_URL));
    const head = doc.head || doc.documentElement;
    const boot = doc.createElement("script");
    boot.textContent = bootScript(config, bridge);
    head.insertBefore(boot, head.firstChild);
    const doctype = /^\s*<!doctype/i.test(source) ? "<!doctype html>\n" : "";
    return { html: doctype + doc.documentElement.outerHTML, missing: [...job.missing], uses: job.uses };
  }
}

// --- one preview frame ----------------------------------------------------------------

const newFrameKey = (viewport) => `${viewport}-${Math.random().toString(36).slice(2, 10)}`;
const SWAP_FALLBACK_MS = 1500; // after its load event, a document whose bridge never reports is shown anyway

/** One width's preview, double-buffered: a new document loads in a second
 * iframe underneath the one the person sees and replaces it once its bridge
 * reports "ready" (loaded, scrolled, painted), so a reload never shows a
 * blank frame. Only the iframe on show has the class "webcraft-frame". */
class PreviewFrame {
  constructor(viewer, viewport) {
    this.viewer = viewer;
    this.viewport = viewport;
    this.key = newFrameKey(viewport);
    this.scrollY = 0;
    this.bakedScrollY = 0; // the scroll position the loading document was built with
    this.info = null;
    this.readyWaiters = [];
    this.iframe = null; // the document on show
    this.incoming = null; // the next one, loading underneath
    this.shownPage = null; // the page of the document on show (another tab's until a switch has loaded)
    this.incomingPage = null;
    this.size = null;
    this.label = h("div", { class: "webcraft-frame-label" });
    this.box = h("div", { class: "webcraft-frame-box" });
    this.root = h("figure", { class: "webcraft-device", "data-viewport": this.viewport }, this.label, this.box);
  }

  createIframe() {
    const iframe = h("iframe", {
      class: "webcraft-frame-loading", sandbox: "allow-scripts", "data-viewport": this.viewport,
      width: String(VIEWPORTS[this.viewport]), height: String(VIEWPORT_HEIGHT[this.viewport]),
    });
    this.applySize(iframe);
    return iframe;
  }

  resize(width, height, scale) {
    this.size = { width, height, scale };
    for (const iframe of [this.iframe, this.incoming]) if (iframe) this.applySize(iframe);
    this.box.style.width = `${Math.round(width * scale)}px`;
    this.box.style.height = `${Math.round(height * scale)}px`;
  }

  applySize(iframe) {
    if (!this.size) return;
    iframe.style.width = `${this.size.width}px`;
    iframe.style.height = `${this.size.height}px`;
    iframe.style.transform = `scale(${this.size.scale})`;
  }

  /** Show `html` (`page` built for `key`); false when a newer render took over. */
  async load(html, key, page) {
    // The server keeps the built page and serves it with the sandbox policy
    // of workspace content (routes.py); a data: or srcdoc frame would inherit
    // the shell's policy and the page's scripts would not run.
    const response = await fetch(FRAMES_URL, {
      method: "POST", credentials: "same-origin",
      headers: { "Content-Type": "application/json" }, body: JSON.stringify({ html }),
    });
    const answer = await response.json();
    if (!response.ok) throw new Error(answer.error?.message || `HTTP ${response.status}`);
    if (key !== this.key) return false;
    const iframe = this.createIframe();
    iframe.src = answer.url;
    if (!this.iframe) {
      iframe.className = "webcraft-frame";
      this.iframe = iframe;
      this.shownPage = page;
      this.box.append(iframe);
      return true;
    }
    this.incoming?.remove(); // a reload still in flight: the newer one replaces it
    this.incoming = iframe;
    this.incomingPage = page;
    iframe.addEventListener("load", () => setTimeout(() => {
      if (this.incoming === iframe) this.swap();
    }, SWAP_FALLBACK_MS));
    this.box.prepend(iframe);
    return true;
  }

  /** The loaded document takes the place of the one on show, in one task
   * (so between two paints). */
  swap() {
    const iframe = this.incoming;
    if (!iframe) return;
    this.incoming = null;
    this.iframe?.remove();
    iframe.className = "webcraft-frame";
    this.iframe = iframe;
    const samePage = this.shownPage === this.incomingPage;
    this.shownPage = this.incomingPage;
    // The person may have scrolled the old document while this one loaded.
    if (samePage && Math.abs(this.scrollY - this.bakedScrollY) > 1) this.post({ type: "scroll-to", scrollY: this.scrollY });
  }

  /** Which of this frame's documents sent a message: "shown", "incoming" or null. */
  whose(source) {
    if (this.iframe && this.iframe.contentWindow === source) return "shown";
    if (this.incoming && this.incoming.contentWindow === source) return "incoming";
    return null;
  }

  ready() {
    if (this.info) return Promise.resolve(this.info);
    return new Promise((resolve) => this.readyWaiters.push(resolve));
  }

  markReady(info) {
    this.info = info;
    for (const resolve of this.readyWaiters.splice(0)) resolve(info);
  }

  post(message) {
    this.iframe?.contentWindow?.postMessage(message, "*");
  }
}

// --- the viewer -----------------------------------------------------------------------

class WebcraftViewer {
  constructor(element, ctx) {
    this.element = element;
    this.ctx = ctx;
    this.t = translator(() => ctx.locale || "en");
    this.files = ctx.files || [];
    this.builder = new PageBuilder(ctx);
    this.page = null;
    this.viewport = "desktop";
    this.pick = false;
    this.selection = null;
    this.errors = []; // {page, viewport, kind, message, source, line, column, at}
    this.frames = [];
    this.uses = null; // the files the open page's last build used (see affectsOpenPage)
    this.pending = new Map();
    this.nextId = 1;
    this.renderSeq = 0;
    this.onMessage = (event) => this.receive(event);
    window.addEventListener("message", this.onMessage);
    stylesheet.acquire();
    this.buildChrome();
    this.offLocale = ctx.onLocaleChange?.(() => this.relabel());
    this.resizeObserver = new ResizeObserver(() => this.fit());
    this.resizeObserver.observe(this.stage);
    this.page = pagesOf(this.files)[0] || null;
    this.render({ keepScroll: false });
  }

  buildChrome() {
    this.tabs = h("div", { class: "webcraft-tabs", role: "tablist" });
    this.sizeButtons = Object.fromEntries([...ORDER, "all"].map((name) => [name,
      h("button", { class: "webcraft-size", type: "button", "data-viewport": name, onclick: () => this.setViewport(name) })]));
    this.pickButton = h("button", { class: "webcraft-pick", type: "button", "aria-pressed": "false", onclick: () => this.setPick(!this.pick) });
    this.reloadButton = h("button", { class: "webcraft-reload", type: "button", onclick: () => this.render({ keepScroll: true }) });
    this.errorButton = h("button", { class: "webcraft-errors-button", type: "button", onclick: () => this.toggleErrors() });
    this.toolbar = h("div", { class: "webcraft-toolbar" },
      this.tabs,
      h("div", { class: "webcraft-controls" },
        h("div", { class: "webcraft-sizes", role: "group" }, ...Object.values(this.sizeButtons)),
        this.pickButton, this.reloadButton, this.errorButton));
    this.stage = h("div", { class: "webcraft-stage" });
    this.errorPanel = h("div", { class: "webcraft-error-panel", hidden: true });
    this.empty = h("div", { class: "webcraft-empty", hidden: true });
    this.element.replaceChildren(h("div", { class: "webcraft-viewer" }, this.toolbar, this.stage, this.errorPanel, this.empty));
    this.relabel();
  }

  relabel() {
    const t = this.t;
    for (const [name, button] of Object.entries(this.sizeButtons)) {
      button.textContent = t(`viewport.${name}`);
      button.title = name === "all" ? t("viewport.allTitle") : t("viewport.title", { width: VIEWPORTS[name] });
      button.setAttribute("aria-pressed", String(name === this.viewport));
    }
    this.tabs.setAttribute("aria-label", t("tabs.label"));
    this.pickButton.textContent = t("pick.button");
    this.pickButton.title = t("pick.title");
    this.reloadButton.textContent = t("reload.button");
    this.reloadButton.title = t("reload.title");
    this.errorButton.textContent = t("errors.button", { count: this.errors.length });
    this.errorButton.classList.toggle("has-errors", this.errors.length > 0);
    this.empty.replaceChildren(h("h2", { text: t("empty.title") }), h("p", { text: t("empty.body") }));
    for (const frame of this.frames) frame.label.textContent = t("viewport.frameLabel", { name: t(`viewport.${frame.viewport}`), width: VIEWPORTS[frame.viewport] });
    this.renderTabs();
    this.renderErrors();
  }

  renderTabs() {
    const pages = pagesOf(this.files);
    this.tabs.replaceChildren(...pages.map((page) => h("button", {
      class: "webcraft-tab", type: "button", role: "tab", "data-page": page,
      "aria-selected": String(page === this.page), title: page,
      onclick: () => this.openPage(page),
    }, page.replace(/\.html?$/i, ""))));
  }

  // --- rendering ---------------------------------------------------------------------

  async render({ keepScroll }) {
    const seq = ++this.renderSeq;
    const pages = pagesOf(this.files);
    if (this.page && !pages.includes(this.page)) this.page = pages[0] || null;
    this.renderTabs();
    this.empty.hidden = !!this.page;
    this.stage.hidden = !this.page;
    if (!this.page) return;
    this.ctx.setActiveFile?.(this.page);
    const wanted = this.viewport === "all" ? ORDER : [this.viewport];
    const scrolls = new Map(this.frames.map((f) => [f.viewport, f.scrollY]));
    if (this.frames.map((f) => f.viewport).join() !== wanted.join()) {
      this.frames = wanted.map((v) => new PreviewFrame(this, v));
      this.stage.replaceChildren(...this.frames.map((f) => f.root));
      this.stage.classList.toggle("all", wanted.length > 1);
      this.relabel();
    }
    // Until the new document reports, actions must wait for it, not talk to the old one.
    // A fresh key per load: a document still loading from an earlier render
    // (its "ready" included) is not taken for this one.
    for (const frame of this.frames) {
      frame.info = null;
      frame.key = newFrameKey(frame.viewport);
      frame.bakedScrollY = frame.scrollY = keepScroll ? scrolls.get(frame.viewport) || 0 : 0;
    }
    this.uses = null; // until the build says which files the page uses, every change counts
    // Questions the old document was answering are asked again by ask().
    for (const [id, waiter] of this.pending) {
      if (this.frames.includes(waiter.frame)) {
        this.pending.delete(id);
        waiter.resolve({ ok: false, reloaded: true, error: "the page reloaded" });
      }
    }
    // A new render replaces this page's old errors: they described the old code.
    this.errors = this.errors.filter((e) => e.page !== this.page);
    const built = await Promise.all(this.frames.map((frame) => this.builder.build(this.files, this.page, {
      frame: frame.key, pick: this.pick, scrollY: frame.bakedScrollY,
    })));
    if (seq !== this.renderSeq) return;
    this.uses = built[0]?.uses ?? null;
    for (const path of built[0]?.missing || []) {
      this.addError({ page: this.page, viewport: "", kind: "missing-file", message: `${this.page} refers to ${path}, which is not in the workspace` });
    }
    await Promise.all(this.frames.map((frame, i) => {
      return frame.load(built[i].html, frame.key, this.page).catch((error) => this.addError({
        page: this.page, viewport: frame.viewport, kind: "preview", message: `the preview could not load: ${error.message}`,
      }));
    }));
    this.fit();
  }

  fit() {
    const available = this.stage.clientWidth - 24;
    if (available <= 0 || !this.frames.length) return;
    const gap = 16;
    const total = this.frames.reduce((sum, f) => sum + VIEWPORTS[f.viewport], 0) + gap * (this.frames.length - 1);
    const scale = Math.min(1, available / total);
    const height = Math.max(200, this.stage.clientHeight - 48);
    for (const frame of this.frames) {
      const w = VIEWPORTS[frame.viewport];
      frame.resize(w, Math.round(height / scale), scale);
      frame.scale = scale;
    }
  }

  // --- messages from the frames ------------------------------------------------------

  receive(event) {
    const message = event.data;
    if (!message || message.source !== "webcraft-bridge") return;
    const frame = this.frames.find((f) => f.whose(event.source));
    if (!frame) return;
    const whose = frame.whose(event.source);
    // What the person does in the document on show counts even while its
    // successor loads underneath; what a document reports about itself
    // (ready, errors, answers) counts only from the current render's.
    const personal = ["scroll", "select", "navigate"].includes(message.type);
    if (personal ? whose !== "shown" : message.frame !== frame.key) return;
    if (message.type === "ready") {
      if (whose === "incoming") frame.swap();
      frame.markReady(message.info || {});
    } else if (message.type === "scroll") frame.scrollY = Number(message.scrollY) || 0;
    else if (message.type === "console") this.addError({ ...message.entry, page: this.page, viewport: frame.viewport });
    else if (message.type === "navigate") {
      const path = resolveRef(frame.shownPage || this.page, String(message.href || ""));
      if (path && pagesOf(this.files).includes(path)) this.openPage(path);
      else if (path) this.addError({ page: this.page, viewport: frame.viewport, kind: "broken-link", message: `link to ${path}, which is not a page of the site` });
    } else if (message.type === "select") this.select(frame, message.selection || {});
    else if (message.type === "reply") {
      const waiter = this.pending.get(message.id);
      if (waiter && waiter.frame === frame) {
        this.pending.delete(message.id);
        waiter.resolve(message.result || {});
      }
    }
  }

  request(frame, message) {
    const id = this.nextId++;
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.pending.delete(id);
        resolve({ ok: false, error: "the page did not answer in time" });
      }, REPLY_TIMEOUT_MS);
      this.pending.set(id, { frame, resolve: (result) => { clearTimeout(timer); resolve(result); } });
      frame.post({ ...message, id });
    });
  }

  /** request() once the frame's document is ready, again if it reloads
   * meanwhile (the agent's files often arrive in more than one write). */
  async ask(frame, message) {
    let result = { ok: false, error: "the page kept reloading" };
    for (let attempt = 0; attempt < 4; attempt++) {
      await Promise.race([frame.ready(), new Promise((r) => setTimeout(r, 8000))]);
      result = await this.request(frame, message);
      if (!result.reloaded) return result;
    }
    return result;
  }

  addError(entry) {
    const clean = {
      page: entry.page, viewport: entry.viewport || "", kind: String(entry.kind || "error"),
      message: String(entry.message || "").slice(0, 2000), source: String(entry.source || ""),
      line: Number(entry.line) || 0, column: Number(entry.column) || 0, at: entry.at || Date.now(),
    };
    if (clean.source.includes("/webcraft/frames/")) {
      // Code the builder could not place in the file (an onclick="…"
      // attribute, say): its line counts in the built document, which would
      // only mislead. Inline <script>s carry their page's name and lines.
      Object.assign(clean, { source: clean.page, line: 0, column: 0 });
    } else if (clean.source) {
      try { clean.source = decodeURI(clean.source); } catch { /* keep it as reported */ }
    }
    // The same error from the three frames of "all" widths is one error.
    if (this.errors.some((e) => e.page === clean.page && e.message === clean.message && e.line === clean.line)) return;
    this.errors.push(clean);
    if (this.errors.length > MAX_ERRORS) this.errors.shift();
    this.errorButton.textContent = this.t("errors.button", { count: this.errors.length });
    this.errorButton.classList.toggle("has-errors", true);
    this.renderErrors();
  }

  toggleErrors(show = this.errorPanel.hidden) {
    this.errorPanel.hidden = !show;
  }

  renderErrors() {
    if (!this.errorPanel) return;
    const t = this.t;
    this.errorPanel.replaceChildren(
      h("div", { class: "webcraft-error-head" }, h("strong", { text: t("errors.heading") }),
        h("button", { type: "button", class: "webcraft-error-close", title: t("errors.close"), onclick: () => this.toggleErrors(false) }, "×")),
      this.errors.length
        ? h("ul", {}, ...this.errors.map((e) => h("li", { class: "webcraft-error", "data-kind": e.kind },
          h("code", { text: `${e.page}${e.line ? `:${e.line}` : ""}` }), " ", e.message)))
        : h("p", { text: t("errors.none") }));
  }

  // --- selection ---------------------------------------------------------------------

  select(frame, selection) {
    const page = frame.shownPage || this.page;
    this.selection = { ...selection, page, viewport: frame.viewport };
    const text = (selection.text || "").slice(0, 40);
    this.ctx.setSelection({
      ...this.selection,
      label: `${page} · ${selection.tag || ""}${text ? ` “${text}”` : ""}`,
    });
  }

  clearSelection() {
    this.selection = null;
    for (const frame of this.frames) frame.post({ type: "clear-selection" });
  }

  setPick(on) {
    this.pick = on;
    this.pickButton.setAttribute("aria-pressed", String(on));
    this.pickButton.classList.toggle("active", on);
    for (const frame of this.frames) frame.post({ type: "pick", on });
  }

  // --- navigation --------------------------------------------------------------------

  openPage(page) {
    if (page === this.page) return;
    this.page = page;
    this.selection = null;
    this.render({ keepScroll: false });
  }

  setViewport(name) {
    if (!(name in VIEWPORTS) && name !== "all") return false;
    this.viewport = name;
    this.relabel();
    this.render({ keepScroll: true });
    return true;
  }

  async waitForPage(page) {
    const deadline = Date.now() + NAV_WAIT_MS;
    while (!pagesOf(this.files).includes(page) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    return pagesOf(this.files).includes(page);
  }

  primaryFrame() {
    return this.frames.find((f) => f.viewport === "desktop") || this.frames[0];
  }

  async show(page) {
    if (page !== this.page) this.openPage(page);
    await new Promise((r) => setTimeout(r, 0));
    const frame = this.primaryFrame();
    await Promise.race([frame.ready(), new Promise((r) => setTimeout(r, 8000))]);
    return frame;
  }

  // --- the contract --------------------------------------------------------------------

  update(files, changes = []) {
    this.files = files;
    this.builder.forget(changes.map((c) => c.path));
    const paths = changes.map((c) => c.path).filter((path) => !HIDDEN_PREFIXES.some((p) => path.startsWith(p)));
    if (!this.page) this.page = pagesOf(files)[0] || null;
    if (!changes.length || this.affectsOpenPage(paths)) this.render({ keepScroll: true });
    else this.renderTabs();
  }

  /** Whether a change to `paths` changes what the open page shows: the page
   * itself or a file its build used (a stylesheet, an @import, a script, an
   * image, a srcset candidate, a missing file that may now exist). Another
   * page or an unrelated asset leaves the preview alone. */
  affectsOpenPage(paths) {
    if (!this.page || !this.uses) return paths.length > 0; // nothing built yet, or a build in flight
    if (!pagesOf(this.files).includes(this.page)) return true; // it was deleted: another page opens
    return paths.some((path) => this.uses.has(path));
  }

  async runAction(actionId, params = {}) {
    const pages = pagesOf(this.files);
    if (actionId === "navigate-to") {
      const page = normalizePath(params.page || "");
      if (!page || !(await this.waitForPage(page))) {
        return { success: false, message: `No page ${params.page} in the workspace; pages: ${pagesOf(this.files).join(", ") || "none"}` };
      }
      const frame = await this.show(page);
      let info = frame.info || {};
      if (params.selector) {
        const result = await this.ask(frame, { type: "scroll-to", selector: params.selector });
        if (!result.ok) return { success: false, message: `Opened ${page}, but no element matches ${params.selector}`, data: result.data };
        info = result.data;
      }
      return { success: true, message: `Showing ${page}${params.selector ? ` at ${params.selector}` : ""}`, data: { page, title: info.title, headings: info.headings } };
    }
    if (actionId === "set-viewport") {
      if (!this.setViewport(params.viewport)) return { success: false, message: `Unknown viewport ${params.viewport}; use phone, tablet, desktop or all` };
      const widths = this.viewport === "all" ? ORDER.map((v) => VIEWPORTS[v]) : [VIEWPORTS[this.viewport]];
      return { success: true, message: `Preview at ${this.viewport} (${widths.join(", ")} px)`, data: { viewport: this.viewport, widths } };
    }
    if (actionId === "describe-view") {
      if (!this.page) return { success: true, message: "The workspace has no HTML page yet", data: { pages } };
      const frame = this.primaryFrame();
      await Promise.race([frame.ready(), new Promise((r) => setTimeout(r, 5000))]);
      const described = await this.ask(frame, { type: "describe" });
      const data = {
        page: this.page, pages, viewport: this.viewport,
        widths: this.frames.map((f) => VIEWPORTS[f.viewport]),
        ...(described.ok ? described.data : {}),
        selection: this.selection, consoleErrors: this.errors.filter((e) => e.page === this.page).length,
      };
      return { success: true, message: `The person sees ${this.page} (“${data.title || ""}”) at ${this.viewport}`, data };
    }
    if (actionId === "get-console-errors") {
      const page = params.page ? normalizePath(params.page) : null;
      const errors = this.errors.filter((e) => !page || e.page === page);
      return { success: true, message: errors.length ? `${errors.length} console error(s)` : "No console errors", data: { errors } };
    }
    if (actionId === "check-accessibility") {
      const page = normalizePath(params.page || this.page || "");
      if (!page || !(await this.waitForPage(page))) return { success: false, message: `No page ${params.page || ""} in the workspace` };
      let source;
      try {
        source = await (axePromise ??= fetchText(AXE_URL));
      } catch (error) {
        axePromise = null;
        return { success: false, message: `axe-core is not installed in the viewer (run scripts/build-web): ${error.message}` };
      }
      const frame = await this.show(page);
      const result = await this.ask(frame, { type: "axe", source });
      if (!result.ok) return { success: false, message: `axe-core failed in ${page}: ${result.error}` };
      const violations = result.data;
      return {
        success: true,
        message: violations.length ? `${violations.length} accessibility rule(s) violated on ${page}` : `No axe-core violations on ${page}`,
        data: { page, viewport: frame.viewport, violations },
      };
    }
    return { success: false, message: `'${actionId}' is not supported by the webcraft viewer` };
  }

  destroy() {
    window.removeEventListener("message", this.onMessage);
    this.resizeObserver.disconnect();
    this.offLocale?.();
    stylesheet.release();
    this.element.replaceChildren();
  }
}

function contextAttr(name, value) {
  return value === undefined || value === null || value === "" ? "" : ` ${name}="${escapeAttr(value)}"`;
}

export default {
  mount(element, ctx) {
    const viewer = new WebcraftViewer(element, ctx);
    return {
      update: (files, changes) => viewer.update(files, changes),
      runAction: (id, params) => viewer.runAction(id, params),
      clearSelection: () => viewer.clearSelection(),
      destroy: () => viewer.destroy(),
      viewer,
    };
  },

  extractContext(selection) {
    if (!selection) return "";
    const box = selection.box || {};
    const boxText = box.width !== undefined ? `${box.x},${box.y} ${box.width}×${box.height}` : "";
    const extra = box.margin ? `margin ${box.margin.join(" ")}; padding ${box.padding.join(" ")}; display ${box.display}; font-size ${box.fontSize}` : "";
    return `<viewer-context mode="${MODE}"${contextAttr("page", selection.page)}${contextAttr("viewport", selection.viewport)}`
      + `${contextAttr("selector", selection.selector)}${contextAttr("box", boxText)}${contextAttr("style", extra)}>`
      + `${String(selection.text || "").replace(/</g, "&lt;")}</viewer-context>`;
  },

  resolveItems(files) {
    return pagesOf(files).map((path, index) => ({ path, label: path, index, metadata: {} }));
  },
};
