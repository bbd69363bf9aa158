// The slide mode's viewer (see docs/viewer-contract.md).
//
// Every slide is rendered alone in its own iframe: a thumbnail per slide in
// the navigator (or a tile in the grid), one large frame for the slide on
// screen, one for present mode. Frames are sandboxed without scripts but
// same-origin, so the viewer can read their DOM to select elements, measure
// overflow and capture images.

import {
  MANIFEST,
  THEME,
  appendToManifest,
  assetRefs,
  buildSlideHtml,
  captureDocument,
  describeElement,
  formatManifest,
  isSlideFile,
  manifestFromFiles,
  measureOverflow,
  normalizePath,
  parseManifest,
  reorderManifest,
  settle,
  slideSize,
  titleFromHtml,
} from "./slide-doc.js";
import { translator } from "./i18n.js";
import { fetchJson, h } from "/static/lib/viewer-helpers.js";

const STYLE_URL = new URL("./viewer.css", import.meta.url).href;
const THUMB_WIDTH = 168;
const VIEWS = ["single", "grid"];
// Where the position (slide on screen, view, outline scroll) is kept across
// a reload of the tab: sessionStorage, per session (the page's ?session=).
const POSITION_KEY = "pneuma-slide:position:";

const ICONS = {
  outline: '<svg viewBox="0 0 20 20" aria-hidden="true"><rect x="2.5" y="3.5" width="15" height="13" rx="2"/><path d="M7.5 3.5v13"/></svg>',
  prev: '<svg viewBox="0 0 20 20" aria-hidden="true"><path d="M12.5 4.5 7 10l5.5 5.5"/></svg>',
  next: '<svg viewBox="0 0 20 20" aria-hidden="true"><path d="M7.5 4.5 13 10l-5.5 5.5"/></svg>',
  single: '<svg viewBox="0 0 20 20" aria-hidden="true"><rect x="2.5" y="4.5" width="15" height="11" rx="1.5"/></svg>',
  grid: '<svg viewBox="0 0 20 20" aria-hidden="true"><rect x="2.5" y="3.5" width="6.5" height="5.5" rx="1"/><rect x="11" y="3.5" width="6.5" height="5.5" rx="1"/><rect x="2.5" y="11" width="6.5" height="5.5" rx="1"/><rect x="11" y="11" width="6.5" height="5.5" rx="1"/></svg>',
  present: '<svg viewBox="0 0 20 20" aria-hidden="true"><path d="M6.5 4.5v11l9-5.5z"/></svg>',
  fit: '<svg viewBox="0 0 20 20" aria-hidden="true"><rect x="3.5" y="3.5" width="13" height="13" rx="1.5" stroke-dasharray="2.5 2"/><path d="M7 10.5l2 2 4-5"/></svg>',
};

function iconButton(name, onclick, extra = {}) {
  const button = h("button", { type: "button", class: "pns-btn", onclick, ...extra });
  button.innerHTML = ICONS[name];
  return button;
}

/** A button whose label is its tooltip and accessible name (the icon-only ones). */
function labelButton(button, label) {
  button.title = label;
  button.setAttribute("aria-label", label);
}

/** An icon followed by a text label, and a tooltip. */
function textButton(button, icon, label, tooltip) {
  button.innerHTML = ICONS[icon];
  button.append(h("span", { text: label }));
  button.title = tooltip;
}

function plural(n, word) {
  return `${n} ${word}${n === 1 ? "" : "s"}`;
}

// ---- Frames --------------------------------------------------------------------

/**
 * One iframe showing one slide document. `paint()` swaps the theme and the
 * fragment in place once the document exists (no reload, no flash), and
 * falls back to srcdoc before that or when the frame was reloaded.
 */
class SlideFrame {
  constructor(viewer, { interactive = false, className = "" } = {}) {
    this.viewer = viewer;
    this.interactive = interactive;
    this.iframe = h("iframe", {
      class: `pns-frame ${className}`,
      sandbox: "allow-same-origin",
      tabindex: interactive ? "0" : "-1",
      "aria-hidden": interactive ? null : "true",
    });
    this.want = null; // {file, fragment, theme}
    this.shown = null;
    this.ready = false;
    this.waiters = [];
    this.iframe.addEventListener("load", () => this.onLoad());
  }

  get doc() {
    try {
      const doc = this.iframe.contentDocument;
      return doc && doc.getElementById("pneuma-theme") ? doc : null;
    } catch {
      return null;
    }
  }

  paint(slide) {
    this.iframe.title = this.viewer.t("frame.title");
    const { width, height } = this.viewer.size;
    const want = { file: slide.file, fragment: slide.fragment, theme: this.viewer.theme, width, height };
    this.want = want;
    const doc = this.ready ? this.doc : null;
    const shown = this.shown;
    if (doc && shown && shown.width === width && shown.height === height) {
      if (shown.theme !== want.theme) doc.getElementById("pneuma-theme").textContent = want.theme;
      if (shown.fragment !== want.fragment || shown.file !== want.file) {
        doc.body.innerHTML = want.fragment;
        doc.documentElement.scrollTop = 0;
        doc.body.scrollTop = 0;
      }
      this.shown = want;
      this.viewer.afterPaint(this, doc);
      this.resolveWaiters();
      return;
    }
    this.ready = false;
    this.shown = want;
    // The body is filled in on load: in a srcdoc the preload scanner would
    // fetch the fragment's images before <base> applies (404s on /assets/).
    this.iframe.srcdoc = buildSlideHtml({ fragment: "", theme: want.theme, width, height,
      base: this.viewer.baseUrl });
  }

  onLoad() {
    const doc = this.doc;
    if (!doc) return; // about:blank before the first paint
    this.ready = true;
    // A frame moved in the DOM reloads its srcdoc, which may be older than
    // what was painted in place since: bring it up to date.
    const want = this.want;
    if (want) {
      if (doc.getElementById("pneuma-theme").textContent !== want.theme) {
        doc.getElementById("pneuma-theme").textContent = want.theme;
      }
      doc.body.innerHTML = want.fragment;
      this.shown = want;
    }
    this.viewer.afterLoad(this, doc);
    this.viewer.afterPaint(this, doc);
    this.resolveWaiters();
  }

  resolveWaiters() {
    const waiters = this.waiters;
    this.waiters = [];
    for (const resolve of waiters) resolve(this.doc);
  }

  /** The painted document, once it exists. */
  whenReady() {
    if (this.ready && this.doc) return Promise.resolve(this.doc);
    return new Promise((resolve) => this.waiters.push(resolve));
  }
}

// ---- The viewer ----------------------------------------------------------------

class SlideViewer {
  constructor(element, ctx) {
    this.el = element;
    this.ctx = ctx;
    this.t = translator(() => ctx.locale || "en");
    this.size = slideSize(ctx.params);
    this.baseUrl = ctx.baseUrl || "/content/";
    this.files = new Map();
    this.assetVersions = new Map();
    this.deck = { title: "", slides: [] };
    this.manifestError = null; // English, for the agent
    this.manifestProblem = null; // {key, params}: the same, for the person
    this.manifestData = null;
    this.theme = "";
    this.current = 0;
    this.view = "single";
    this.outlineVisible = true;
    this.presenting = false;
    this.selection = null; // {file, el, info}
    this.fitResults = new Map();
    this.thumbs = [];
    this.tiles = [];
    this.extras = []; // slide files manifest.json does not list: [{file, title}]
    this.listeners = [];
    this.published = null; // what the selection chip was last told (see publishSelection)
    this.destroyed = false;

    this.build();
    this.setFiles(ctx.files || []);
    this.restorePosition();
    this.render();
    this.restoreScroll();
    this.stopLocale = ctx.onLocaleChange ? ctx.onLocaleChange(() => this.relabel()) : null;
    queueMicrotask(() => this.announceSlide());
  }

  // -- state from files

  setFiles(list) {
    this.files = new Map();
    for (const f of list) if (f && f.path) this.files.set(normalizePath(f.path), f);
    this.readDeck();
  }

  readDeck() {
    const entry = this.files.get(MANIFEST);
    const parsed = parseManifest(entry ? entry.content : null);
    if (parsed.ok) {
      this.deck = { title: parsed.title, slides: parsed.slides };
      this.manifestData = parsed.data;
      this.manifestError = null;
      this.manifestProblem = null;
    } else {
      // Keep showing the last good deck while the manifest is broken.
      this.manifestError = parsed.error;
      this.manifestProblem = { key: parsed.errorKey, params: parsed.errorParams || {} };
      if (parsed.missing) {
        this.deck = { title: "", slides: [] };
        this.manifestData = null;
      }
    }
    const theme = this.files.get(THEME);
    this.theme = theme && typeof theme.content === "string" ? theme.content : "";
    this.readExtras();
  }

  /** Slide files in the slide folder that the deck does not list (the agent wrote one, forgot the manifest). */
  readExtras() {
    const listed = new Set(this.deck.slides.map((s) => s.file));
    this.extras = [...this.files.values()]
      .filter((f) => isSlideFile(f.path) && !listed.has(f.path) && typeof f.content === "string")
      .map((f) => ({ file: f.path, title: titleFromHtml(f.content, f.path) }))
      .sort((a, b) => a.file.localeCompare(b.file));
  }

  /** The manifest problem in the person's language. */
  manifestProblemText() {
    const problem = this.manifestProblem;
    return problem && problem.key ? this.t(problem.key, problem.params) : this.manifestError;
  }

  slideAt(index) {
    const meta = this.deck.slides[index];
    if (!meta) return null;
    const entry = this.files.get(meta.file);
    const exists = entry && typeof entry.content === "string";
    return {
      index,
      file: meta.file,
      title: meta.title,
      missing: !exists,
      fragment: exists ? entry.content : this.missingFragment(meta.file),
    };
  }

  /** What a frame shows for a slide manifest.json lists but that does not exist. */
  missingFragment(file) {
    return `<section class="slide" style="align-items:center;justify-content:center;text-align:center">
<p class="eyebrow">${escapeHtml(this.t("missing.eyebrow"))}</p><h2>${escapeHtml(file)}</h2>`
      + `<p class="muted">${escapeHtml(this.t("missing.body"))}</p></section>`;
  }

  get currentSlide() {
    return this.slideAt(this.current);
  }

  // -- DOM

  build() {
    if (!document.querySelector(`link[href="${STYLE_URL}"]`)) {
      document.head.append(h("link", { rel: "stylesheet", href: STYLE_URL, "data-pneuma-slide": "" }));
    }
    this.el.classList.add("pns-host");
    this.outlineBtn = iconButton("outline", () => this.toggleOutline());
    this.prevBtn = iconButton("prev", () => this.go(this.current - 1));
    this.nextBtn = iconButton("next", () => this.go(this.current + 1));
    this.counter = h("span", { class: "pns-counter", "aria-live": "polite" });
    this.deckTitle = h("span", { class: "pns-deck-title" });
    this.viewBtns = {
      single: iconButton("single", () => this.setView("single")),
      grid: iconButton("grid", () => this.setView("grid")),
    };
    this.presentBtn = h("button", { type: "button", class: "pns-btn pns-btn--text pns-btn--primary",
      onclick: () => this.present() });
    this.fitBtn = h("button", { type: "button", class: "pns-btn pns-btn--text", onclick: () => this.checkFromUi() });
    this.viewGroup = h("div", { class: "pns-seg", role: "group" }, this.viewBtns.single, this.viewBtns.grid);

    this.toolbar = h("div", { class: "pns-toolbar" },
      this.outlineBtn,
      h("div", { class: "pns-nav-btns" }, this.prevBtn, this.counter, this.nextBtn),
      this.deckTitle,
      h("div", { class: "pns-spacer" }),
      this.viewGroup,
      this.fitBtn,
      // Exports are the shell's Export menu (the mode's exporter): PDF,
      // HTML, PNG per slide, PPTX.
      this.presentBtn);

    this.banner = h("div", { class: "pns-banner", hidden: true });
    this.notice = h("div", { class: "pns-notice", hidden: true, role: "status" });
    this.nav = h("nav", { class: "pns-nav" });
    // Slide files the manifest does not list, below the deck's thumbnails.
    this.extraHeading = h("div", { class: "pns-extra-heading" });
    this.extraList = h("div", { class: "pns-extra-list" });
    this.extraGroup = h("section", { class: "pns-extra", hidden: true }, this.extraHeading, this.extraList);
    this.nav.append(this.extraGroup);
    this.stageFrame = new SlideFrame(this, { interactive: true, className: "pns-frame--stage" });
    this.stageBox = h("div", { class: "pns-stage-box" }, this.stageFrame.iframe);
    this.stageCaption = h("div", { class: "pns-stage-caption" });
    this.empty = h("div", { class: "pns-empty", hidden: true });
    this.stage = h("div", { class: "pns-stage" }, this.stageBox, this.stageCaption, this.empty);
    this.grid = h("div", { class: "pns-grid", hidden: true });
    this.measureHost = h("div", { class: "pns-measure", "aria-hidden": "true" });
    this.root = h("div", { class: "pns", tabindex: "-1" },
      this.toolbar, this.banner,
      h("div", { class: "pns-main" }, this.nav, this.stage, this.grid),
      this.notice, this.measureHost);
    this.el.append(this.root);

    this.applyLabels();
    this.setSizeVars(this.root);
    this.root.style.setProperty("--thumb-scale", String(THUMB_WIDTH / this.size.width));
    this.root.style.setProperty("--thumb-w", `${THUMB_WIDTH}px`);
    this.root.style.setProperty("--thumb-h", `${Math.round((THUMB_WIDTH * this.size.height) / this.size.width)}px`);

    this.resizeObserver = new ResizeObserver(() => this.layout());
    this.resizeObserver.observe(this.stage);
    this.resizeObserver.observe(this.grid);
    this.on(document, "keydown", (e) => this.onKey(e, false));
    const keepScroll = () => {
      clearTimeout(this.positionTimer);
      this.positionTimer = setTimeout(() => this.savePosition(), 150);
    };
    this.on(this.nav, "scroll", keepScroll, { passive: true });
    this.on(this.grid, "scroll", keepScroll, { passive: true });
    this.on(window, "resize", () => { if (this.presenting) this.layout(); });
    this.on(document, "fullscreenchange", () => {
      if (!document.fullscreenElement && this.presenting) this.leavePresent();
    });
    this.setupDrag();
  }

  // -- the position across a reload

  positionKey() {
    let session = "";
    try {
      session = new URLSearchParams(location.search).get("session") || "";
    } catch {
      /* no location: one key for all */
    }
    return POSITION_KEY + session;
  }

  /** Remember which slide is on screen (by file), the view, the outline and its scroll, for a reload. */
  savePosition() {
    if (this.restoring || this.destroyed) return;
    const slide = this.currentSlide;
    const position = { file: slide ? slide.file : null, view: this.view, outline: this.outlineVisible,
      navScroll: Math.round(this.nav.scrollTop), gridScroll: Math.round(this.grid.scrollTop) };
    try {
      sessionStorage.setItem(this.positionKey(), JSON.stringify(position));
    } catch {
      /* storage unavailable: the position is simply not kept */
    }
  }

  /** Before the first render: the slide, view and outline the tab showed before it was reloaded. */
  restorePosition() {
    let position = null;
    try {
      position = JSON.parse(sessionStorage.getItem(this.positionKey()) || "null");
    } catch {
      position = null;
    }
    this.savedPosition = position && typeof position === "object" ? position : null;
    if (!this.savedPosition) return;
    const { file, view, outline } = this.savedPosition;
    const index = typeof file === "string" ? this.deck.slides.findIndex((s) => s.file === file) : -1;
    if (index >= 0) this.current = index;
    if (VIEWS.includes(view)) this.view = view;
    if (typeof outline === "boolean") this.outlineVisible = outline;
  }

  /**
   * After the first render: the outline's and the grid's scroll. Tried on
   * each frame until the panel is laid out tall enough to take it (the
   * shell may size the viewer's panel a little after mount), for at most
   * a second and a half.
   */
  restoreScroll() {
    const position = this.savedPosition;
    if (!position) return;
    const navWant = Number(position.navScroll) || 0;
    const gridWant = Number(position.gridScroll) || 0;
    this.restoring = true;
    const started = performance.now();
    const attempt = () => {
      if (this.destroyed) return;
      if (navWant) this.nav.scrollTop = navWant;
      if (gridWant && !this.grid.hidden) this.grid.scrollTop = gridWant;
      const done = Math.abs(this.nav.scrollTop - navWant) <= 1
        && (this.grid.hidden || Math.abs(this.grid.scrollTop - gridWant) <= 1);
      if (!done && performance.now() - started < 1500) {
        requestAnimationFrame(attempt);
        return;
      }
      if (!navWant && !gridWant) this.scrollThumbIntoView();
      this.restoring = false;
    };
    requestAnimationFrame(attempt);
  }

  /** The fixed labels of the toolbar and panels, in the current language. */
  applyLabels() {
    const t = this.t;
    labelButton(this.outlineBtn, t("toolbar.outline"));
    labelButton(this.prevBtn, t("toolbar.prev"));
    labelButton(this.nextBtn, t("toolbar.next"));
    labelButton(this.viewBtns.single, t("toolbar.single"));
    labelButton(this.viewBtns.grid, t("toolbar.grid"));
    this.viewGroup.setAttribute("aria-label", t("toolbar.views"));
    textButton(this.presentBtn, "present", t("toolbar.present"), t("toolbar.presentTitle"));
    textButton(this.fitBtn, "fit", t("toolbar.fit"), t("toolbar.fitTitle"));
    this.nav.setAttribute("aria-label", t("nav.label"));
    this.extraHeading.textContent = t("extra.heading");
    this.extraHeading.title = t("extra.hint");
    if (this.presentEl) {
      this.presentEl.setAttribute("aria-label", t("present.label"));
      this.presentHint.textContent = t("present.hint");
    }
  }

  /** The language changed: every label, then everything rendered with words, then the chip. */
  relabel() {
    if (this.destroyed) return;
    this.applyLabels();
    this.render();
    this.published = null;
    if (this.currentSlide) this.publishSelection();
  }

  setSizeVars(el) {
    el.style.setProperty("--slide-w", `${this.size.width}px`);
    el.style.setProperty("--slide-h", `${this.size.height}px`);
    el.style.setProperty("--slide-aspect", `${this.size.width} / ${this.size.height}`);
  }

  on(target, type, fn, options) {
    target.addEventListener(type, fn, options);
    this.listeners.push(() => target.removeEventListener(type, fn, options));
  }

  // -- rendering

  render() {
    if (this.destroyed) return;
    const n = this.deck.slides.length;
    if (this.current >= n) this.current = Math.max(0, n - 1);
    this.renderToolbar();
    this.renderNav();
    this.renderStage();
    if (this.view === "grid") this.renderGrid();
    if (this.presenting) this.renderPresent();
  }

  renderToolbar() {
    const n = this.deck.slides.length;
    this.counter.textContent = n ? `${this.current + 1} / ${n}` : "0 / 0";
    this.prevBtn.disabled = this.current <= 0;
    this.nextBtn.disabled = this.current >= n - 1;
    this.deckTitle.textContent = this.deck.title;
    this.deckTitle.title = this.deck.title;
    for (const view of VIEWS) {
      this.viewBtns[view].classList.toggle("is-on", this.view === view);
      this.viewBtns[view].setAttribute("aria-pressed", String(this.view === view));
    }
    this.outlineBtn.classList.toggle("is-on", this.outlineVisible);
    this.outlineBtn.setAttribute("aria-pressed", String(this.outlineVisible));
    this.nav.hidden = !this.outlineVisible;
    this.stage.hidden = this.view !== "single";
    this.grid.hidden = this.view !== "grid";
    if (this.manifestError) {
      this.banner.hidden = false;
      const problem = this.manifestProblemText();
      this.banner.textContent = this.deck.slides.length ? this.t("manifest.stale", { error: problem }) : problem;
    } else {
      this.banner.hidden = true;
    }
  }

  /**
   * Positional slots (outline thumbnails, grid tiles): slot i always shows
   * slide i. Adds or drops slots to match the deck, then paints each one:
   * `create(n)` makes slot n ({item, frame, badge, …}), `paint(slot, meta, i)`
   * fills in what differs between thumbnails and tiles.
   */
  syncSlots(slots, container, create, paint) {
    const slides = this.deck.slides;
    while (slots.length > slides.length) slots.pop().item.remove();
    while (slots.length < slides.length) {
      const slot = create(slots.length);
      slots.push(slot);
      // In the outline, the deck's slides come before the "not in the deck" group.
      container.insertBefore(slot.item, container === this.nav ? this.extraGroup : null);
    }
    slides.forEach((meta, i) => {
      const slot = slots[i];
      const slide = this.slideAt(i);
      slot.item.dataset.index = String(i);
      slot.item.dataset.file = meta.file;
      slot.item.classList.toggle("is-current", i === this.current);
      paint(slot, meta, i);
      this.paintBadge(slot.badge, meta.file, slide.missing);
      slot.frame.paint(slide);
    });
  }

  renderNav() {
    this.syncSlots(this.thumbs, this.nav, (n) => {
      const frame = new SlideFrame(this, { className: "pns-frame--thumb" });
      const num = h("span", { class: "pns-thumb-num" });
      const title = h("span", { class: "pns-thumb-title" });
      const badge = h("span", { class: "pns-badge", hidden: true });
      const item = h("div", { class: "pns-thumb", role: "button", tabindex: "0", "data-index": String(n) },
        num,
        h("div", { class: "pns-thumb-body" },
          h("div", { class: "pns-thumb-frame" }, frame.iframe, badge),
          title));
      return { item, frame, num, title, badge };
    }, (slot, meta, i) => {
      slot.item.setAttribute("aria-current", i === this.current ? "true" : "false");
      slot.item.setAttribute("aria-label", this.t("nav.slide", { n: i + 1, title: meta.title }));
      slot.item.title = `${meta.file}\n${this.t("nav.dragHint")}`;
      slot.num.textContent = String(i + 1);
      slot.title.textContent = meta.title;
    });
    this.renderExtras();
  }

  /** The "not in the deck" group: each slide file the manifest does not list, with one-click "Add to deck". */
  renderExtras() {
    const extras = this.extras;
    this.extraGroup.hidden = extras.length === 0;
    const kept = new Map(Array.from(this.extraList.children).map((el) => [el.dataset.file, el]));
    const items = extras.map((extra) => {
      let item = kept.get(extra.file);
      if (!item) {
        const frame = new SlideFrame(this, { className: "pns-frame--extra" });
        const add = h("button", { type: "button", class: "pns-btn pns-btn--text pns-extra-add",
          onclick: () => this.addToDeck(item.dataset.file) });
        item = h("div", { class: "pns-extra-item", "data-file": extra.file },
          h("div", { class: "pns-thumb-frame" }, frame.iframe),
          h("span", { class: "pns-extra-title" }),
          h("span", { class: "pns-extra-file" }),
          add);
        item.frame = frame;
      }
      item.querySelector(".pns-extra-title").textContent = extra.title;
      item.querySelector(".pns-extra-file").textContent = extra.file;
      const add = item.querySelector(".pns-extra-add");
      add.textContent = this.t("extra.add");
      add.title = this.t("extra.addTitle", { file: extra.file });
      item.frame.paint({ file: extra.file, fragment: this.files.get(extra.file).content });
      return item;
    });
    this.extraList.replaceChildren(...items);
  }

  paintBadge(badge, file, missing) {
    const fit = this.fitResults.get(file);
    if (missing) {
      badge.hidden = false;
      badge.textContent = this.t("badge.missing");
      badge.title = this.t("badge.missingTitle", { file });
    } else if (fit && !fit.fits) {
      badge.hidden = false;
      const parts = [];
      if (fit.overflowY) parts.push(`${fit.overflowY}px ↕`);
      if (fit.overflowX) parts.push(`${fit.overflowX}px ↔`);
      badge.textContent = this.t("badge.overflow", { amount: parts.join(" ") });
      badge.title = fit.elements.map((e) => e.selector).join("\n");
    } else {
      badge.hidden = true;
    }
  }

  renderStage() {
    const slide = this.currentSlide;
    if (!slide) {
      this.stageBox.hidden = true;
      this.stageCaption.textContent = "";
      this.empty.hidden = false;
      this.empty.textContent = this.manifestError && !this.deck.slides.length
        ? this.manifestProblemText()
        : this.t("stage.empty");
      return;
    }
    this.stageBox.hidden = false;
    this.empty.hidden = true;
    this.stageFrame.paint(slide);
    this.stageCaption.textContent = "";
    this.stageCaption.append(
      h("span", { class: "pns-caption-num", text: this.t("stage.position", { n: slide.index + 1, total: this.deck.slides.length }) }),
      h("span", { class: "pns-caption-title", text: slide.title }),
      h("span", { class: "pns-caption-file", text: slide.file }));
    this.layout();
  }

  renderGrid() {
    this.syncSlots(this.tiles, this.grid, (n) => {
      const frame = new SlideFrame(this, { className: "pns-frame--tile" });
      const label = h("div", { class: "pns-tile-label" });
      const badge = h("span", { class: "pns-badge", hidden: true });
      const item = h("div", { class: "pns-tile", role: "button", tabindex: "0", "data-index": String(n) },
        h("div", { class: "pns-tile-frame" }, frame.iframe, badge), label);
      return { item, frame, label, badge };
    }, (tile, meta, i) => {
      tile.label.textContent = "";
      tile.label.append(h("span", { class: "pns-tile-num", text: String(i + 1) }), h("span", { text: meta.title }));
    });
    this.layout();
  }

  layout() {
    const { width, height } = this.size;
    if (this.view === "single" && !this.stage.hidden) {
      const captionH = this.stageCaption.offsetHeight || 0;
      const availW = Math.max(40, this.stage.clientWidth - 48);
      const availH = Math.max(40, this.stage.clientHeight - 48 - captionH);
      const scale = Math.min(availW / width, availH / height);
      this.stageScale = scale;
      this.stageBox.style.width = `${Math.floor(width * scale)}px`;
      this.stageBox.style.height = `${Math.floor(height * scale)}px`;
      this.stageFrame.iframe.style.transform = `scale(${scale})`;
    }
    if (this.view === "grid" && this.tiles.length) {
      const box = this.tiles[0].item.querySelector(".pns-tile-frame");
      const w = box.clientWidth;
      if (w) this.grid.style.setProperty("--tile-scale", String(w / width));
    }
    if (this.presenting && this.presentFrame) {
      const scale = Math.min(window.innerWidth / width, window.innerHeight / height);
      this.presentFrame.iframe.style.transform = `scale(${scale})`;
      this.presentBox.style.width = `${width * scale}px`;
      this.presentBox.style.height = `${height * scale}px`;
    }
  }

  // -- frame hooks

  afterLoad(frame, doc) {
    if (frame.interactive) {
      doc.documentElement.classList.add("pneuma-pick");
      doc.addEventListener("click", (e) => this.onSlideClick(e, doc), true);
      doc.addEventListener("mouseover", (e) => this.onSlideHover(e, doc));
      doc.addEventListener("mouseleave", () => this.clearHover(doc));
      doc.addEventListener("keydown", (e) => this.onKey(e, true));
    } else if (frame === this.presentFrame) {
      doc.addEventListener("keydown", (e) => this.onKey(e, true));
      doc.addEventListener("click", (e) => { e.preventDefault(); this.go(this.current + (e.shiftKey ? -1 : 1)); });
    }
  }

  afterPaint(frame, doc) {
    this.refreshAssets(doc);
    if (frame === this.stageFrame) this.restoreSelection(doc);
  }

  /** Images changed on disk get a fresh URL so the frame does not keep the old one. */
  refreshAssets(doc) {
    if (!this.assetVersions.size) return;
    for (const img of doc.querySelectorAll("img[src]")) {
      const raw = img.getAttribute("src");
      const path = normalizePath(raw.split("?")[0]);
      const version = this.assetVersions.get(path);
      if (version && raw !== `${path}?v=${version}`) img.setAttribute("src", `${path}?v=${version}`);
    }
  }

  // -- navigation and views

  go(index, { announce = true } = {}) {
    const n = this.deck.slides.length;
    if (!n) return false;
    const next = Math.max(0, Math.min(n - 1, index));
    if (next === this.current && this.currentSlide) {
      this.renderToolbar();
      return true;
    }
    this.current = next;
    if (this.selection && this.selection.file !== this.currentSlide.file) this.selection = null;
    this.render();
    this.scrollThumbIntoView();
    if (announce) this.announceSlide();
    this.savePosition();
    return true;
  }

  scrollThumbIntoView() {
    const slot = this.thumbs[this.current];
    if (slot && !this.nav.hidden) slot.item.scrollIntoView({ block: "nearest" });
    const tile = this.tiles[this.current];
    if (tile && this.view === "grid") tile.item.scrollIntoView({ block: "nearest" });
  }

  setView(view) {
    if (!VIEWS.includes(view) || view === this.view) return;
    this.view = view;
    this.render();
    this.scrollThumbIntoView();
    this.savePosition();
  }

  toggleOutline(visible) {
    this.outlineVisible = typeof visible === "boolean" ? visible : !this.outlineVisible;
    this.renderToolbar();
    this.layout();
    this.savePosition();
    return this.outlineVisible;
  }

  /** Tell the shell which slide is on screen; with no element selected it is the viewer context. */
  announceSlide() {
    const slide = this.currentSlide;
    if (!slide || this.destroyed) return;
    if (this.ctx.setActiveFile) this.ctx.setActiveFile(slide.file);
    if (!this.selection) this.publishSelection();
  }

  /** What the shell's selection chip shows for the slide on screen (and the element selected in it). */
  selectionFor() {
    const slide = this.currentSlide;
    if (!slide) return null;
    const base = { file: slide.file, index: slide.index + 1, total: this.deck.slides.length, title: slide.title };
    if (this.selection && this.selection.file === slide.file) {
      const info = this.selection.info;
      const name = info.tag + (info.classes.length ? `.${info.classes[0]}` : "");
      let text = info.text.replace(/["“”]/g, "");
      if (text.length > 36) text = text.slice(0, 36).replace(/\s+\S*$/, "") + "…";
      const element = `${name}${text ? ` “${text}”` : ""}`;
      return { ...base, ...info, label: this.t("chip.element", { n: base.index, element }) };
    }
    return { ...base, label: this.t("chip.slide", { n: base.index, title: slide.title }) };
  }

  publishSelection() {
    if (!this.ctx.setSelection) return;
    const sel = this.selectionFor();
    this.published = JSON.stringify(sel);
    this.ctx.setSelection(sel);
  }

  /**
   * The chip derives from the deck as it is now: when the agent renames the
   * slide on screen (its title in manifest.json), moves it or adds slides,
   * the chip says so without the person clicking again.
   */
  refreshChip() {
    if (!this.ctx.setSelection || !this.currentSlide) return;
    if (JSON.stringify(this.selectionFor()) !== this.published) this.publishSelection();
  }

  // -- present mode

  present() {
    if (!this.deck.slides.length) return;
    if (this.presenting) return;
    this.presenting = true;
    this.presentFrame = new SlideFrame(this, { className: "pns-frame--present" });
    this.presentBox = h("div", { class: "pns-present-box" }, this.presentFrame.iframe);
    this.presentCounter = h("div", { class: "pns-present-counter" });
    this.presentHint = h("div", { class: "pns-present-hint" });
    this.presentEl = h("div", { class: "pns-present", tabindex: "-1", role: "dialog" },
      this.presentBox, this.presentCounter, this.presentHint);
    this.applyLabels();
    this.setSizeVars(this.presentEl);
    this.presentEl.addEventListener("click", (e) => {
      if (e.target === this.presentEl) this.go(this.current + 1);
    });
    document.body.append(this.presentEl);
    this.renderPresent();
    this.layout();
    this.presentEl.focus();
    if (this.presentEl.requestFullscreen) {
      this.presentEl.requestFullscreen().catch(() => { /* the overlay still fills the window */ });
    }
  }

  renderPresent() {
    const slide = this.currentSlide;
    if (!slide || !this.presentFrame) return;
    this.presentFrame.paint(slide);
    this.presentCounter.textContent = `${slide.index + 1} / ${this.deck.slides.length}`;
  }

  leavePresent() {
    if (!this.presenting) return;
    this.presenting = false;
    if (document.fullscreenElement) document.exitFullscreen().catch(() => {});
    if (this.presentEl) this.presentEl.remove();
    this.presentEl = null;
    this.presentFrame = null;
    this.render();
    this.root.focus({ preventScroll: true });
  }

  onKey(e, fromFrame) {
    if (this.destroyed || e.defaultPrevented || e.altKey || e.ctrlKey || e.metaKey) return;
    if (!fromFrame && !this.presenting) {
      // Only when the person is in the viewer, never while typing in the chat.
      const t = e.target;
      const inViewer = t === document.body || (t && this.root.contains(t));
      if (!inViewer || (t && t.matches && t.matches("input, textarea, select, [contenteditable]"))) return;
    }
    const key = e.key;
    let handled = true;
    if (key === "ArrowRight" || key === "PageDown" || (key === " " && this.presenting) || (key === "ArrowDown" && this.presenting)) {
      this.go(this.current + 1);
    } else if (key === "ArrowLeft" || key === "PageUp" || (key === "ArrowUp" && this.presenting)) {
      this.go(this.current - 1);
    } else if (key === "Home") {
      this.go(0);
    } else if (key === "End") {
      this.go(this.deck.slides.length - 1);
    } else if (key === "Escape") {
      if (this.presenting) this.leavePresent();
      else if (this.selection) this.clearSelection();
      else handled = false;
    } else if ((key === "f" || key === "F5") && !this.presenting && fromFrame) {
      this.present();
    } else {
      handled = false;
    }
    if (handled) e.preventDefault();
  }

  // -- selection inside the slide on screen

  onSlideClick(e, doc) {
    e.preventDefault();
    e.stopPropagation();
    let el = e.target;
    if (!el || el.nodeType !== 1) return;
    if (el === doc.documentElement || el === doc.body) el = doc.body.firstElementChild || doc.body;
    if (el === doc.body) return;
    const slide = this.currentSlide;
    if (this.selection && this.selection.el === el) {
      this.clearSelection();
      return;
    }
    this.clearMarks(doc, "data-pneuma-selected");
    el.setAttribute("data-pneuma-selected", "");
    this.selection = { file: slide.file, el, info: describeElement(el) };
    this.publishSelection();
  }

  clearSelection() {
    const doc = this.stageFrame.doc;
    if (doc) this.clearMarks(doc, "data-pneuma-selected");
    this.selection = null;
    this.publishSelection();
  }

  /** After a re-render, mark the selected element again (by its selector). */
  restoreSelection(doc) {
    const sel = this.selection;
    this.clearMarks(doc, "data-pneuma-selected");
    if (!sel || sel.file !== (this.currentSlide && this.currentSlide.file)) return;
    let el = null;
    try { el = doc.querySelector(sel.info.selector); } catch { el = null; }
    if (el) {
      sel.el = el;
      el.setAttribute("data-pneuma-selected", "");
      const info = describeElement(el);
      if (info.text !== sel.info.text || info.selector !== sel.info.selector) {
        sel.info = info;
        this.publishSelection();
      }
    }
  }

  onSlideHover(e, doc) {
    const el = e.target;
    this.clearHover(doc);
    if (el && el.nodeType === 1 && el !== doc.body && el !== doc.documentElement) el.setAttribute("data-pneuma-hover", "");
  }

  clearHover(doc) {
    this.clearMarks(doc, "data-pneuma-hover");
  }

  clearMarks(doc, attr) {
    for (const el of doc.querySelectorAll(`[${attr}]`)) el.removeAttribute(attr);
  }

  // -- drag to reorder (pointer events: works with mouse, pen and touch)

  setupDrag() {
    const start = (container, itemSelector) => (e) => {
      if (e.button !== 0) return;
      const item = e.target.closest(itemSelector);
      if (!item || !container.contains(item)) return;
      const from = Number(item.dataset.index);
      const x0 = e.clientX;
      const y0 = e.clientY;
      let dragging = false;
      let to = from;
      const indicator = h("div", { class: "pns-drop" });
      const items = () => Array.from(container.querySelectorAll(itemSelector));
      const move = (ev) => {
        if (!dragging) {
          if (Math.hypot(ev.clientX - x0, ev.clientY - y0) < 6) return;
          dragging = true;
          item.classList.add("is-dragging");
          container.classList.add("is-sorting");
          container.append(indicator);
        }
        ev.preventDefault();
        to = dropIndex(items(), ev.clientX, ev.clientY, container === this.grid);
        placeIndicator(indicator, container, items(), to, container === this.grid);
        autoScroll(container, ev.clientY);
      };
      const up = () => {
        window.removeEventListener("pointermove", move);
        window.removeEventListener("pointerup", up);
        window.removeEventListener("pointercancel", up);
        indicator.remove();
        item.classList.remove("is-dragging");
        container.classList.remove("is-sorting");
        if (!dragging) {
          // A plain click.
          if (container === this.grid) {
            this.go(from);
            this.setView("single");
          } else {
            this.go(from);
          }
          return;
        }
        const target = to > from ? to - 1 : to;
        if (target !== from) this.moveSlide(from, target);
      };
      window.addEventListener("pointermove", move);
      window.addEventListener("pointerup", up);
      window.addEventListener("pointercancel", up);
    };
    this.nav.addEventListener("pointerdown", start(this.nav, ".pns-thumb"));
    this.grid.addEventListener("pointerdown", start(this.grid, ".pns-tile"));
    const keys = (container, itemSelector) => (e) => {
      const item = e.target.closest && e.target.closest(itemSelector);
      if (!item) return;
      const i = Number(item.dataset.index);
      if (e.key === "Enter" || e.key === " ") {
        e.preventDefault();
        this.go(i);
        if (container === this.grid) this.setView("single");
      } else if (e.altKey && (e.key === "ArrowUp" || e.key === "ArrowLeft") && i > 0) {
        e.preventDefault();
        this.moveSlide(i, i - 1).then(() => this.focusSlot(container, i - 1));
      } else if (e.altKey && (e.key === "ArrowDown" || e.key === "ArrowRight") && i < this.deck.slides.length - 1) {
        e.preventDefault();
        this.moveSlide(i, i + 1).then(() => this.focusSlot(container, i + 1));
      }
    };
    this.nav.addEventListener("keydown", keys(this.nav, ".pns-thumb"));
    this.grid.addEventListener("keydown", keys(this.grid, ".pns-tile"));
  }

  focusSlot(container, i) {
    const item = container.querySelectorAll(container === this.grid ? ".pns-tile" : ".pns-thumb")[i];
    if (item) item.focus();
  }

  /** Move slide `from` to position `to` and rewrite manifest.json. */
  async moveSlide(from, to) {
    const order = this.deck.slides.map((s) => s.file);
    if (from < 0 || from >= order.length || to < 0 || to >= order.length || from === to) return;
    if (this.manifestError || !this.manifestData) {
      this.flash(this.t("reorder.refused", { reason: this.manifestProblemText() || this.t("manifest.missing") }), "error");
      return;
    }
    const currentFile = this.currentSlide && this.currentSlide.file;
    const [moved] = order.splice(from, 1);
    order.splice(to, 0, moved);
    const data = reorderManifest(this.manifestData, order);
    const text = formatManifest(data);
    // Show the new order at once; the write comes back as a "self" change.
    const previous = this.files.get(MANIFEST);
    this.files.set(MANIFEST, { ...(previous || {}), path: MANIFEST, content: text });
    this.readDeck();
    const idx = this.deck.slides.findIndex((s) => s.file === currentFile);
    if (idx >= 0) this.current = idx;
    this.render();
    try {
      await this.ctx.writeFile(MANIFEST, text);
      this.flash(this.t("reorder.moved", { title: this.deck.slides[to].title, n: to + 1 }));
    } catch (err) {
      if (previous) this.files.set(MANIFEST, previous);
      this.readDeck();
      this.render();
      this.flash(this.t("save.failed", { message: err && err.message ? err.message : err }), "error");
    }
    this.announceSlide();
  }

  /**
   * Append a slide file the manifest does not list to manifest.json, then
   * show it. The manifest is read from disk first, not from the last
   * snapshot, so an edit the agent made meanwhile is kept; a broken or
   * missing manifest is refused, as a reorder is.
   */
  async addToDeck(file) {
    const extra = this.extras.find((e) => e.file === file);
    if (!extra) return false;
    let text;
    try {
      const body = await fetchJson(`/api/files/read?path=${encodeURIComponent(MANIFEST)}`);
      text = body && body.content;
    } catch (err) {
      text = err && err.status === 404 ? null : undefined;
      if (text === undefined) {
        this.flash(this.t("extra.refused", { reason: err && err.message ? err.message : err }), "error");
        return false;
      }
    }
    const parsed = parseManifest(text);
    if (!parsed.ok) {
      const reason = parsed.errorKey ? this.t(parsed.errorKey, parsed.errorParams || {}) : parsed.error;
      this.flash(this.t("extra.refused", { reason }), "error");
      return false;
    }
    let index = parsed.slides.findIndex((s) => s.file === file);
    let next = text;
    if (index < 0) {
      next = formatManifest(appendToManifest(parsed.data, { file, title: extra.title }));
      index = parsed.slides.length;
      try {
        await this.ctx.writeFile(MANIFEST, next);
      } catch (err) {
        this.flash(this.t("save.failed", { message: err && err.message ? err.message : err }), "error");
        return false;
      }
    }
    // Show it at once; the write comes back as a "self" change with the same text.
    const previous = this.files.get(MANIFEST);
    this.files.set(MANIFEST, { ...(previous || {}), path: MANIFEST, content: next });
    this.readDeck();
    if (this.view !== "single" && !this.presenting) this.view = "single";
    this.current = Math.min(index, this.deck.slides.length - 1);
    this.selection = null;
    this.render();
    this.scrollThumbIntoView();
    this.announceSlide();
    this.savePosition();
    this.flash(this.t("extra.added", { title: this.deck.slides[this.current].title, n: this.current + 1 }));
    return true;
  }

  // -- notices

  flash(text, kind = "info", ms = 3200) {
    this.notice.hidden = false;
    this.notice.textContent = text;
    this.notice.dataset.kind = kind;
    clearTimeout(this.noticeTimer);
    this.noticeTimer = setTimeout(() => { this.notice.hidden = true; }, ms);
  }

  async checkFromUi() {
    this.fitBtn.disabled = true;
    try {
      // The action's message is for the agent (English); the person gets a summary in their language.
      const result = await this.checkContentFit({});
      const slides = (result.data && result.data.slides) || [];
      const bad = slides.filter((r) => !r.fits);
      const size = `${this.size.width}×${this.size.height}`;
      const text = !result.success ? this.t("stage.empty")
        : bad.length ? this.t("fit.someOverflow", { bad: bad.length, count: slides.length, size,
          files: bad.map((r) => r.file).join(", ") })
          : this.t("fit.allFit", { count: slides.length, size });
      this.flash(text, result.success && !bad.length ? "ok" : "error", 6000);
    } finally {
      this.fitBtn.disabled = false;
    }
  }

  // -- measuring and capturing in fresh, off-screen frames

  async renderOffscreen(slide, fn) {
    const frame = new SlideFrame(this, { className: "pns-frame--measure" });
    this.measureHost.append(frame.iframe);
    try {
      frame.paint(slide);
      const doc = await frame.whenReady();
      await settle(doc);
      return await fn(doc);
    } finally {
      frame.iframe.remove();
    }
  }

  resolveFiles(list) {
    const known = this.deck.slides.map((s) => s.file);
    const wanted = [];
    const unknown = [];
    for (const raw of list) {
      const file = normalizePath(raw);
      if (known.includes(file)) wanted.push(file);
      else unknown.push(String(raw));
    }
    return { wanted, unknown, known };
  }

  async checkContentFit(params) {
    const slides = this.deck.slides;
    if (!slides.length) return { success: false, message: "The deck has no slides (manifest.json lists none)." };
    let files = slides.map((s) => s.file);
    if (params && Array.isArray(params.slides) && params.slides.length) {
      const { wanted, unknown, known } = this.resolveFiles(params.slides);
      if (unknown.length) {
        return { success: false, message: `Not in manifest.json: ${unknown.join(", ")}. Slides: ${known.join(", ")}`,
          data: { unknown, slides: known } };
      }
      files = wanted;
    }
    const { width, height } = this.size;
    const known = new Set(this.files.keys());
    const results = new Array(files.length);
    let next = 0;
    const worker = async () => {
      while (next < files.length) {
        const i = next++;
        const index = slides.findIndex((s) => s.file === files[i]);
        const slide = this.slideAt(index);
        if (slide.missing) {
          results[i] = { file: slide.file, index: index + 1, title: slide.title, fits: false, overflowX: 0, overflowY: 0,
            elements: [], missing: true };
          continue;
        }
        results[i] = await this.renderOffscreen(slide, (doc) => {
          const m = measureOverflow(doc, width, height);
          const missingAssets = assetRefs(doc).filter((p) => !known.has(p));
          const entry = { file: slide.file, index: index + 1, title: slide.title, ...m };
          if (missingAssets.length) entry.missingAssets = missingAssets;
          return entry;
        });
      }
    };
    await Promise.all([worker(), worker(), worker(), worker()]);
    for (const r of results) this.fitResults.set(r.file, r);
    this.renderNav();
    if (this.view === "grid") this.renderGrid();
    const bad = results.filter((r) => !r.fits);
    const lines = [];
    if (!bad.length) lines.push(`All ${plural(results.length, "slide")} checked fit the ${width}×${height} canvas.`);
    else lines.push(`${bad.length} of ${plural(results.length, "slide")} checked do not fit the ${width}×${height} canvas:`);
    for (const r of bad) {
      if (r.missing) { lines.push(`- ${r.file}: the file does not exist`); continue; }
      const where = [];
      if (r.overflowY) where.push(`${r.overflowY}px vertically`);
      if (r.overflowX) where.push(`${r.overflowX}px horizontally`);
      lines.push(`- ${r.file} (slide ${r.index}) overflows by ${where.join(" and ")}: ${r.elements.slice(0, 3).map((e) => e.selector).join("; ")}`);
    }
    const withMissing = results.filter((r) => r.missingAssets);
    for (const r of withMissing) lines.push(`- ${r.file} refers to missing files: ${r.missingAssets.join(", ")}`);
    return { success: true, message: lines.join("\n"), data: { slideWidth: width, slideHeight: height, slides: results } };
  }

  async captureScreenshot(params) {
    let slide = this.currentSlide;
    if (params && params.file) {
      const { wanted, unknown, known } = this.resolveFiles([params.file]);
      if (unknown.length) {
        return { success: false, message: `No slide "${params.file}" in manifest.json. Slides: ${known.join(", ")}`,
          data: { slides: known } };
      }
      slide = this.slideAt(this.deck.slides.findIndex((s) => s.file === wanted[0]));
    }
    if (!slide) return { success: false, message: "The deck has no slides to capture." };
    if (slide.missing) return { success: false, message: `${slide.file} does not exist.` };
    const { width, height } = this.size;
    const dataUrl = await this.renderOffscreen(slide, (doc) => captureDocument(doc, { width, height, theme: this.theme }));
    const stem = slide.file.split("/").pop().replace(/\.html?$/i, "").replace(/[^A-Za-z0-9._-]+/g, "-");
    const name = `slide-${stem}`;
    let saved;
    if (this.ctx.saveCapture) {
      saved = await this.ctx.saveCapture(name, dataUrl);
    } else {
      const res = await fetch("/api/captures", { method: "POST", credentials: "same-origin",
        headers: { "Content-Type": "application/json" }, body: JSON.stringify({ name, data: dataUrl }) });
      saved = await res.json();
      if (!res.ok) throw new Error((saved.error && saved.error.message) || `capture failed (${res.status})`);
    }
    return {
      success: true,
      message: `Saved a ${width}×${height} PNG of ${slide.file} (slide ${slide.index + 1}) to ${saved.path}`,
      data: { path: saved.path, file: slide.file, index: slide.index + 1, width, height },
    };
  }

  describeView() {
    const slide = this.currentSlide;
    const view = this.presenting ? "present" : this.view;
    const sel = this.selection && slide && this.selection.file === slide.file
      ? { file: slide.file, index: slide.index + 1, ...this.selection.info } : null;
    const viewName = { single: "single-slide view", grid: "grid view", present: "full-screen presentation" }[view];
    let message;
    if (!slide) {
      message = `The deck has no slides; ${viewName}.`;
    } else {
      message = `Slide ${slide.index + 1} of ${this.deck.slides.length} ("${slide.title}", ${slide.file}) in ${viewName}; `
        + `outline ${this.outlineVisible ? "visible" : "hidden"}; `
        + (sel ? `selected <${sel.tag}${sel.classes.length ? ` class="${sel.classes.join(" ")}"` : ""}> "${sel.text}" (${sel.selector}).`
          : "nothing selected.");
    }
    if (this.manifestError) message += ` Warning: ${this.manifestError}.`;
    const notInDeck = this.extras.map((e) => e.file);
    if (notInDeck.length) message += ` Not in manifest.json (shown to the person as "not in the deck"): ${notInDeck.join(", ")}.`;
    return {
      success: true,
      message,
      data: {
        view,
        outlineVisible: this.outlineVisible,
        current: slide ? { index: slide.index + 1, file: slide.file, title: slide.title } : null,
        total: this.deck.slides.length,
        deckTitle: this.deck.title,
        slideSize: { ...this.size },
        zoom: this.stageScale ? Math.round(this.stageScale * 100) / 100 : null,
        selection: sel,
        slides: this.deck.slides.map((s, i) => ({ index: i + 1, file: s.file, title: s.title })),
        manifestError: this.manifestError,
        notInDeck,
      },
    };
  }

  // -- the instance API

  update(files, changes) {
    const list = Array.isArray(changes) ? changes : [];
    if (Array.isArray(files) && files.length) {
      this.setFiles(files);
    } else {
      for (const c of list) {
        const path = normalizePath(c.path);
        if (c.deleted) this.files.delete(path);
        else this.files.set(path, { path, content: c.content, binary: c.binary });
      }
      this.readDeck();
    }
    const assetChanges = list.map((c) => normalizePath(c.path)).filter((p) => p && p !== MANIFEST && p !== THEME && !/\.html?$/i.test(p));
    for (const path of assetChanges) this.assetVersions.set(path, Date.now().toString(36));
    // Keep the slide on screen by its file, wherever the manifest puts it now.
    const shown = this.stageFrame.want && this.stageFrame.want.file;
    const idx = shown ? this.deck.slides.findIndex((s) => s.file === shown) : -1;
    if (idx >= 0) this.current = idx;
    if (this.fitResults.size) {
      for (const c of list) this.fitResults.delete(normalizePath(c.path));
      if (list.some((c) => normalizePath(c.path) === THEME)) this.fitResults.clear();
    }
    this.render();
    if (assetChanges.length) {
      for (const frame of [this.stageFrame, ...this.thumbs.map((t) => t.frame), ...this.tiles.map((t) => t.frame), this.presentFrame]) {
        const doc = frame && frame.doc;
        if (doc) this.refreshAssets(doc);
      }
    }
    if (idx < 0 && shown) this.announceSlide();
    else this.refreshChip();
    this.savePosition();
  }

  async runAction(actionId, params = {}) {
    params = params || {};
    switch (actionId) {
      case "navigate-to": {
        const raw = params.file;
        if (typeof raw !== "string" || !raw.trim()) return { success: false, message: "navigate-to needs {\"file\": \"slides/NN-slug.html\"}" };
        const file = normalizePath(raw);
        const index = this.deck.slides.findIndex((s) => s.file === file);
        if (index < 0) {
          const known = this.deck.slides.map((s) => s.file);
          return { success: false, message: `No slide "${raw}" in manifest.json. Slides: ${known.join(", ") || "none"}`,
            data: { slides: known } };
        }
        if (this.view !== "single" && !this.presenting) this.setView("single");
        this.go(index);
        const slide = this.currentSlide;
        return { success: true, message: `Showing slide ${index + 1} of ${this.deck.slides.length}: "${slide.title}"`,
          data: { file: slide.file, index: index + 1, title: slide.title, total: this.deck.slides.length } };
      }
      case "ui:toggle-outline": {
        const visible = this.toggleOutline(typeof params.visible === "boolean" ? params.visible : undefined);
        return { success: true, message: `The outline is now ${visible ? "visible" : "hidden"}.`, data: { outlineVisible: visible } };
      }
      case "checkContentFit":
        return this.checkContentFit(params);
      case "describe-view":
        return this.describeView();
      case "capture-screenshot":
        return this.captureScreenshot(params);
      default:
        return { success: false, message: `${actionId} is not supported by the slide viewer` };
    }
  }

  destroy() {
    this.destroyed = true;
    if (this.presenting) this.leavePresent();
    this.resizeObserver.disconnect();
    for (const off of this.listeners) off();
    clearTimeout(this.noticeTimer);
    clearTimeout(this.positionTimer);
    if (this.stopLocale) this.stopLocale();
    this.root.remove();
    this.el.classList.remove("pns-host");
  }
}

function escapeHtml(text) {
  return String(text).replace(/[&<>"]/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;" })[c]);
}

function dropIndex(items, x, y, twoD) {
  // The index before which the dragged item would land.
  let best = items.length;
  for (let i = 0; i < items.length; i++) {
    const r = items[i].getBoundingClientRect();
    if (twoD) {
      if (y < r.top) { best = i; break; }
      if (y <= r.bottom && x < r.left + r.width / 2) { best = i; break; }
    } else if (y < r.top + r.height / 2) {
      best = i;
      break;
    }
  }
  return best;
}

function placeIndicator(indicator, container, items, index, twoD) {
  const host = container.getBoundingClientRect();
  const ref = items[Math.min(index, items.length - 1)];
  if (!ref) return;
  const r = ref.getBoundingClientRect();
  const after = index >= items.length;
  if (twoD) {
    const x = after ? r.right + 8 : r.left - 8;
    indicator.className = "pns-drop pns-drop--v";
    indicator.style.left = `${x - host.left + container.scrollLeft - 2}px`;
    indicator.style.top = `${r.top - host.top + container.scrollTop}px`;
    indicator.style.height = `${r.height}px`;
    indicator.style.width = "";
  } else {
    const y = after ? r.bottom + 3 : r.top - 3;
    indicator.className = "pns-drop pns-drop--h";
    indicator.style.top = `${y - host.top + container.scrollTop - 1}px`;
    indicator.style.left = "8px";
    indicator.style.right = "8px";
    indicator.style.height = "";
  }
}

function autoScroll(container, y) {
  const r = container.getBoundingClientRect();
  if (y < r.top + 32) container.scrollTop -= 12;
  else if (y > r.bottom - 32) container.scrollTop += 12;
}

// ---- The module's contract -------------------------------------------------------

function attr(value) {
  return String(value).replace(/&/g, "&amp;").replace(/"/g, "&quot;").replace(/</g, "&lt;").replace(/\n/g, " ");
}

function oneLine(value) {
  return String(value == null ? "" : value).replace(/\s+/g, " ").trim();
}

export default {
  mount(element, ctx) {
    return new SlideViewer(element, ctx);
  },

  /**
   * <viewer-context mode="slide" file="slides/03-point.html" slide="3">
   * Slide 3 of 8: "Point at it. Don't describe it."
   * Selected: <p class="lead"> "Click an element on a slide, then type…"
   * Selector: section.slide > p.lead
   * </viewer-context>
   */
  extractContext(selection, files) {
    if (!selection || !selection.file) return "";
    const file = normalizePath(selection.file);
    const deck = manifestFromFiles(files || []);
    const slides = deck.slides.length ? deck.slides : [];
    const i = slides.findIndex((s) => s.file === file);
    const number = i >= 0 ? i + 1 : selection.index;
    const total = slides.length || selection.total;
    const title = i >= 0 ? slides[i].title : selection.title;
    const lines = [];
    if (number) lines.push(`Slide ${number} of ${total}: "${oneLine(title)}"`);
    if (selection.selector) {
      const classes = Array.isArray(selection.classes) && selection.classes.length ? ` class="${selection.classes.join(" ")}"` : "";
      lines.push(`Selected: <${selection.tag || "element"}${classes}> "${oneLine(selection.text)}"`);
      lines.push(`Selector: ${oneLine(selection.selector)}`);
    }
    const slideAttr = number ? ` slide="${number}"` : "";
    return `<viewer-context mode="slide" file="${attr(file)}"${slideAttr}>\n${lines.join("\n")}\n</viewer-context>`;
  },

  resolveItems(files) {
    return manifestFromFiles(files || []).slides.map((s, i) => ({
      path: s.file,
      label: `${i + 1}. ${s.title}`,
      index: i,
      metadata: { title: s.title },
    }));
  },
};
