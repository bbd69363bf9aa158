// The webcraft mode's viewer: the site's pages live, one tab per HTML page,
// at a phone, tablet or desktop width or all three side by side.
//
// Isolation (docs/security.md): a page is workspace content, so it never
// runs where it could reach Pneuma's API. The frames load the pages from
// the mode's content site (routes.py, pneuma.api.ContentSite): the
// workspace served read-only on another port, so another origin than the
// shell's, with a token of its own. There a page works as it does when
// published (fetch, ES module imports, relative URLs made in script), and
// the site adds a small bridge (bridge.js) as the first script of every
// page, which talks to the viewer with postMessage: console errors, the
// picked element, the files the page loaded, scroll position, link clicks;
// describe, scroll-to and axe-core on request. Only messages from the
// content site's origin are listened to.
//
// Reloads: the bridge reports every file the page used (the document and
// all it loaded, fetches included), and only a change to one of them
// reloads the page, which then loads underneath the one on show and
// replaces it once painted (PreviewFrame), so it never blinks.

import { h, normalizePath, sharedStylesheet } from "/static/lib/viewer-helpers.js";
import { translator } from "./i18n.js";
import { annotate, pinLayer } from "./annotate.js";
import { editInPlace } from "./edit-in-place.js";

const MODE = "webcraft";
const CSS_URL = new URL("./viewer.css", import.meta.url).href;
const SITE_URL = "/api/webcraft/site";
const VIEWPORTS = { phone: 390, tablet: 820, desktop: 1280 };
const VIEWPORT_HEIGHT = { phone: 844, tablet: 1180, desktop: 800 };
const ORDER = ["phone", "tablet", "desktop"];
const HIDDEN_PREFIXES = [".pneuma/", ".claude/", ".git/", "node_modules/", "exports/"];
const NAV_WAIT_MS = 2500; // how long navigate-to waits for a page that is still being written
const REPLY_TIMEOUT_MS = 20000;
const MAX_ERRORS = 200;
// Safe only because the frame's origin is the content site's, never the
// shell's: allow-same-origin gives the page that origin (so its fetches and
// module imports reach the content site with its cookie), and from there it
// can neither read the shell nor call Pneuma's API (another origin, refused
// by the server's Origin check). No allow-top-navigation: it cannot replace
// the shell.
const FRAME_SANDBOX = "allow-scripts allow-same-origin allow-forms allow-popups allow-modals";

const stylesheet = sharedStylesheet(CSS_URL, { "data-pneuma-webcraft": "" });
let sitePromise = null;

/** The content site's origin and token (asked once; again after a failure). */
function contentSite() {
  sitePromise ??= fetch(`${SITE_URL}?hostname=${encodeURIComponent(location.hostname)}`, { credentials: "same-origin" })
    .then(async (r) => {
      const body = await r.json();
      if (!r.ok) throw new Error(body.error?.message || `HTTP ${r.status}`);
      return body;
    })
    .catch((error) => { sitePromise = null; throw error; });
  return sitePromise;
}

// --- paths --------------------------------------------------------------------------

function isPage(path) {
  return /\.html?$/i.test(path) && !HIDDEN_PREFIXES.some((p) => path.startsWith(p) || path.includes("/" + p));
}

function pagesOf(files) {
  return files.map((f) => f.path).filter(isPage)
    .sort((a, b) => (a !== "index.html") - (b !== "index.html") || a.split("/").length - b.split("/").length || a.localeCompare(b));
}


const dirname = (path) => (path.includes("/") ? path.slice(0, path.lastIndexOf("/")) : "");
const isExternal = (url) => /^([a-z][a-z0-9+.-]*:|\/\/)/i.test(url);

function resolveRef(from, ref) {
  const clean = ref.split(/[?#]/)[0];
  if (!clean || isExternal(ref) || ref.startsWith("#")) return null;
  return normalizePath(clean.startsWith("/") ? clean.slice(1) : `${dirname(from)}/${clean}`);
}

const escapeAttr = (s) => String(s).replace(/&/g, "&amp;").replace(/"/g, "&quot;").replace(/</g, "&lt;");
// Where on the content site the shown files are: the workspace now (its
// root), or a checkpoint's side for Compare and the timeline (ctx.snapshot;
// pneuma/server/snapshot_site.py), with the same isolation.
const siteRoot = (snapshot) => (snapshot ? `__pneuma__/snapshot/${encodeURIComponent(snapshot.ref)}/${encodeURIComponent(snapshot.side)}/` : "");
const pageUrl = (site, page, root = "") =>
  `${site.origin}/${root}${page.split("/").map(encodeURIComponent).join("/")}?token=${encodeURIComponent(site.token)}`;

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
    this.bakedScrollY = 0; // the scroll position the loading document was asked to restore
    this.info = null;
    this.readyWaiters = [];
    this.iframe = null; // the document on show
    this.incoming = null; // the next one, loading underneath
    this.shownPage = null; // the page of the document on show (another tab's until a switch has loaded)
    this.incomingPage = null;
    this.size = null;
    this.label = h("div", { class: "webcraft-frame-label" });
    this.pinLayer = h("div", { class: "webcraft-pin-layer", "aria-hidden": "true" });
    this.box = h("div", { class: "webcraft-frame-box" }, this.pinLayer);
    this.root = h("figure", { class: "webcraft-device", "data-viewport": this.viewport }, this.label, this.box);
  }

  createIframe(config) {
    const iframe = h("iframe", {
      class: "webcraft-frame-loading", sandbox: FRAME_SANDBOX, "data-viewport": this.viewport,
      // The bridge reads its configuration from the frame's name (the page's URL stays its own).
      name: "webcraft:" + JSON.stringify(config),
      // The shell's URL (it may carry Pneuma's token) is not the page's business.
      referrerpolicy: "no-referrer",
      // A frame is named for assistive technology (axe-core: frame-title).
      title: this.viewer.t("frame.title"),
      width: String(VIEWPORTS[this.viewport]), height: String(VIEWPORT_HEIGHT[this.viewport]),
    });
    this.applySize(iframe);
    return iframe;
  }

  resize(width, height, scale) {
    const rescaled = this.size && this.size.scale !== scale;
    this.size = { width, height, scale };
    if (rescaled) this.drawPins(this.pinBoxes);
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

  /** Show `page` from the content site (`site`), loaded for `key`. */
  load(site, key, page, config) {
    if (key !== this.key) return false;
    const iframe = this.createIframe({ ...config, frame: key, parentOrigin: location.origin });
    iframe.src = pageUrl(site, page, this.viewer.root);
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

  /** Stop loading the next document: it would replace the one the person
   * is editing under their caret. True if one was loading. */
  dropIncoming() {
    if (!this.incoming) return false;
    this.incoming.remove();
    this.incoming = null;
    return true;
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
    if (this.viewer.site) this.iframe?.contentWindow?.postMessage(message, this.viewer.site.origin);
  }
}

Object.assign(PreviewFrame.prototype, pinLayer);

// --- the viewer -----------------------------------------------------------------------

class WebcraftViewer {
  constructor(element, ctx) {
    this.element = element;
    this.ctx = ctx;
    this.t = translator(() => ctx.locale || "en");
    this.files = ctx.files || [];
    this.site = null; // the content site: {origin, token}
    this.root = siteRoot(ctx.snapshot); // where on it the files shown are
    this.page = null;
    this.viewport = "desktop";
    this.pick = false;
    this.selection = null;
    this.errors = []; // {page, viewport, kind, message, source, line, column, at}
    this.pins = []; // the shell's pins (showPins), markers drawn for those on this page
    this.editing = false; // an in-place edit under way in a frame
    this.frames = [];
    this.uses = null; // the files the open page's document used, as its bridge reported (see affectsOpenPage)
    this.changedWhileLoading = new Set();
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
    // Select comes first: picking is how a place here is pinned, so it sits
    // where the eye starts, beside the pages.
    this.toolbar = h("div", { class: "webcraft-toolbar" },
      h("div", { class: "webcraft-lead" }, this.pickButton, this.tabs),
      h("div", { class: "webcraft-controls" },
        h("div", { class: "webcraft-sizes", role: "group" }, ...Object.values(this.sizeButtons)),
        this.reloadButton, this.errorButton));
    this.stage = h("div", { class: "webcraft-stage" });
    this.errorPanel = h("div", { class: "webcraft-error-panel", hidden: true });
    this.empty = h("div", { class: "webcraft-empty", hidden: true });
    this.noticeBar = h("div", { class: "webcraft-notice", role: "status", hidden: true });
    this.element.replaceChildren(h("div", { class: "webcraft-viewer" }, this.toolbar, this.noticeBar, this.stage, this.errorPanel, this.empty));
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
    const problems = this.problems();
    this.tabs.replaceChildren(...pages.map((page) => h("button", {
      class: `webcraft-tab${problems[page] ? " has-problem" : ""}`, type: "button", role: "tab", "data-page": page,
      "aria-selected": String(page === this.page), title: problems[page] ? `${page} · ${problems[page]}` : page,
      onclick: () => this.openPage(page),
    }, page.replace(/\.html?$/i, ""))));
  }

  pagesNow() {
    return pagesOf(this.files);
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
    this.uses = null; // until the bridge says which files the page uses
    this.changedWhileLoading = new Set(); // weighed against them once it has
    // Questions the old document was answering are asked again by ask().
    for (const [id, waiter] of this.pending) {
      if (this.frames.includes(waiter.frame)) {
        this.pending.delete(id);
        waiter.resolve({ ok: false, reloaded: true, error: "the page reloaded" });
      }
    }
    // A new load replaces this page's old errors: they described the old code.
    this.errors = this.errors.filter((e) => e.page !== this.page);
    let site;
    try {
      site = this.site = await contentSite();
    } catch (error) {
      this.addError({ page: this.page, viewport: "", kind: "preview", message: `the preview could not load: ${error.message}` });
      return;
    }
    if (seq !== this.renderSeq) return;
    for (const frame of this.frames) {
      frame.load(site, frame.key, this.page, { pick: this.pick, scrollY: frame.bakedScrollY });
    }
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
    // Only the content site's pages speak for the preview.
    if (!this.site || event.origin !== this.site.origin) return;
    const frame = this.frames.find((f) => f.whose(event.source));
    if (!frame) return;
    const whose = frame.whose(event.source);
    // What the person does in the document on show counts even while its
    // successor loads underneath; what a document reports about itself
    // (ready, errors, answers) counts only from the current render's.
    const personal = ["scroll", "select", "navigate", "edit-start", "edit", "key"].includes(message.type);
    if (personal ? whose !== "shown" : message.frame !== frame.key) return;
    if (message.type === "ready") {
      if (whose === "incoming") frame.swap();
      frame.markReady(message.info || {});
      this.sendPins(frame);
      if (this.editing) this.setEditing(false); // a new document: the edit in the old one is over
    } else if (message.type === "pin-boxes") frame.drawPins(message.boxes);
    else if (message.type === "edit-start") this.editStarted(frame);
    else if (message.type === "edit") this.editDone(frame, message);
    else if (message.type === "key") this.forwardKey(message);
    else if (message.type === "scroll") frame.scrollY = Number(message.scrollY) || 0;
    else if (message.type === "console") this.addError({ ...message.entry, page: this.page, viewport: frame.viewport });
    else if (message.type === "uses") {
      this.uses ??= new Set();
      for (const path of Array.isArray(message.paths) ? message.paths : []) this.uses.add(String(path));
      // A file it used changed while it loaded: it may show the old one.
      const stale = [...this.changedWhileLoading].some((path) => this.uses.has(path));
      this.changedWhileLoading.clear();
      if (stale) this.render({ keepScroll: true });
    }
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
    // The same error from the three frames of "all" widths is one error.
    if (this.errors.some((e) => e.page === clean.page && e.message === clean.message && e.line === clean.line)) return;
    this.errors.push(clean);
    if (this.errors.length > MAX_ERRORS) this.errors.shift();
    this.errorButton.textContent = this.t("errors.button", { count: this.errors.length });
    this.errorButton.classList.toggle("has-errors", true);
    this.renderErrors();
    this.renderTabs();
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

  // The shell's Annotate switch: picking is how a place here is pinned, so
  // it goes on with it, and off again only if Annotate turned it on.
  setAnnotating(on) {
    if (on && !this.pick) {
      this.pickedForAnnotate = true;
      this.setPick(true);
    } else if (!on && this.pickedForAnnotate) {
      this.pickedForAnnotate = false;
      if (this.pick) this.setPick(false);
    }
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
    this.cropBatch = null; // crops of the files before are out of date
    const paths = changes.map((c) => c.path).filter((path) => !HIDDEN_PREFIXES.some((p) => path.startsWith(p)));
    if (!this.page) this.page = pagesOf(files)[0] || null;
    const affected = !changes.length || this.affectsOpenPage(paths);
    // Not under an edit in progress: the page reloads once it is saved (edit-in-place.js).
    if (affected && this.editing) this.reloadAfterEdit = true;
    if (affected && !this.editing) this.render({ keepScroll: true });
    else this.renderTabs();
  }

  /** Whether a change to `paths` changes what the open page shows: the page
   * itself or a file it loaded (a stylesheet, an @import, a script, a module
   * it imported, an image, a srcset candidate, a fetched file, one that was
   * missing and may now exist). Another page or an unrelated asset leaves
   * the preview alone. */
  affectsOpenPage(paths) {
    if (!this.page) return paths.length > 0;
    if (!pagesOf(this.files).includes(this.page)) return true; // it was deleted: another page opens
    if (!this.uses) {
      // A load in flight: whether these count is known once its bridge reports what it used.
      for (const path of paths) this.changedWhileLoading.add(path);
      return paths.includes(this.page);
    }
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
      const frame = await this.show(page);
      const result = await this.ask(frame, { type: "axe" });
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

Object.assign(WebcraftViewer.prototype, annotate, editInPlace);

export default {
  capabilities: ["annotate", "edit", "follow"],

  mount(element, ctx) {
    const viewer = new WebcraftViewer(element, ctx);
    return {
      update: (files, changes) => viewer.update(files, changes),
      runAction: (id, params) => viewer.runAction(id, params),
      clearSelection: () => viewer.clearSelection(),
      setAnnotating: (on) => viewer.setAnnotating(on),
      showPins: (pins) => viewer.showPins(pins),
      capturePin: (pin) => viewer.capturePin(pin),
      pinPlace: (selection, files) => viewer.pinPlace(selection, files),
      revealPin: (pin) => viewer.revealPin(pin),
      reveal: (path) => viewer.reveal(path),
      problems: () => viewer.problems(),
      get editing() { return viewer.editing; },
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
