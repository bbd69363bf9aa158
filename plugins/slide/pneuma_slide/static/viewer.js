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
  isSlideFile,
  manifestFromFiles,
  normalizePath,
  parseManifest,
  slideSize,
  titleFromHtml,
} from "./slide-doc.js";
import { translator } from "./i18n.js";
import { h } from "/static/lib/viewer-helpers.js";
import { agentActions } from "./agent-actions.js";
import { escapeHtml, iconButton, labelButton, textButton } from "./controls.js";
import { deckOrder } from "./deck-order.js";
import { SlideFrame } from "./frames.js";
import { pointing } from "./pointing.js";
import { following } from "./follow.js";
import { annotating } from "./annotate.js";
import { editingInPlace } from "./inplace-edit.js";

const STYLE_URL = new URL("./viewer.css", import.meta.url).href;
const THUMB_WIDTH = 168;
const VIEWS = ["single", "grid"];
// Where the position (slide on screen, view, outline scroll) is kept across
// a reload of the tab: sessionStorage, per session (the page's ?session=).
const POSITION_KEY = "pneuma-slide:position:";

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
    this.scheduleFitCheck(null);
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
    this.drawPins();
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
      frame.iframe.setAttribute("aria-hidden", "true");
      const item = h("div", { class: "pns-thumb", role: "button", tabindex: "0", "data-index": String(n) },
        num,
        h("div", { class: "pns-thumb-body" },
          h("div", { class: "pns-thumb-frame" }, frame.iframe, badge),
          title));
      return { item, frame, num, title, badge };
    }, (slot, meta, i) => {
      slot.item.setAttribute("aria-current", i === this.current ? "true" : "false");
      // Named by what it shows (its number and title), as a voice user says
      // it: "Slides" is the list's own label (nav.label); the small picture
      // is hidden from assistive technology, its slide's text is the title.
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
      badge.textContent = `⚠ ${this.t("badge.overflow", { amount: this.overflowAmount(fit) })}`;
      badge.title = this.overflowReason(fit);
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
    // Not under the person's hands: an edit in place finishes first (inplace-edit.js).
    if (!this.editing) this.stageFrame.paint(slide);
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
    this.drawPins();
  }

  // -- frame hooks

  afterLoad(frame, doc) {
    if (frame.interactive) {
      doc.documentElement.classList.add("pneuma-pick");
      doc.addEventListener("click", (e) => this.onSlideClick(e, doc), true);
      doc.addEventListener("dblclick", (e) => this.onSlideDoubleClick(e, doc));
      doc.addEventListener("mouseover", (e) => this.onSlideHover(e, doc));
      doc.addEventListener("mouseleave", () => this.clearHover(doc));
      doc.addEventListener("keydown", (e) => {
        this.forwardUndoKey(e);
        this.onKey(e, true);
      });
    } else if (frame === this.presentFrame) {
      doc.addEventListener("keydown", (e) => this.onKey(e, true));
      doc.addEventListener("click", (e) => { e.preventDefault(); this.go(this.current + (e.shiftKey ? -1 : 1)); });
    }
  }

  afterPaint(frame, doc) {
    this.refreshAssets(doc);
    if (frame === this.stageFrame) {
      this.restoreSelection(doc);
      this.drawPins();
    }
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

  /**
   * Tell the shell. Only a click is the person's own pointing; the slide on
   * screen as the default context, or a selection re-described after a
   * re-render, is `auto` and never becomes a review pin
   * (docs/viewer-contract.md, "Annotate").
   */
  publishSelection({ byPerson = false } = {}) {
    if (!this.ctx.setSelection) return;
    const sel = this.selectionFor();
    this.published = JSON.stringify(sel);
    this.ctx.setSelection(sel && !byPerson ? { ...sel, auto: true } : sel);
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


  // -- drag to reorder (pointer events: works with mouse, pen and touch)


  // -- notices

  flash(text, kind = "info", ms = 3200) {
    this.notice.hidden = false;
    this.notice.textContent = text;
    this.notice.dataset.kind = kind;
    clearTimeout(this.noticeTimer);
    this.noticeTimer = setTimeout(() => { this.notice.hidden = true; }, ms);
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
    this.fitCheckAfter(list, THEME, MANIFEST);
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


  destroy() {
    this.destroyed = true;
    if (this.presenting) this.leavePresent();
    this.resizeObserver.disconnect();
    for (const off of this.listeners) off();
    clearTimeout(this.noticeTimer);
    clearTimeout(this.positionTimer);
    clearTimeout(this.fitTimer);
    if (this.stopLocale) this.stopLocale();
    this.root.remove();
    this.el.classList.remove("pns-host");
  }
}

// The class's methods by concern live beside it (pointing.js, deck-order.js,
// agent-actions.js), the way its navigator and stage call them.
Object.assign(SlideViewer.prototype, pointing, deckOrder, agentActions, following, annotating, editingInPlace);

// ---- The module's contract -------------------------------------------------------

function attr(value) {
  return String(value).replace(/&/g, "&amp;").replace(/"/g, "&quot;").replace(/</g, "&lt;").replace(/\n/g, " ");
}

function oneLine(value) {
  return String(value == null ? "" : value).replace(/\s+/g, " ").trim();
}

export default {
  // docs/viewer-contract.md, "Annotate, edit in place, follow the agent":
  // annotate.js, inplace-edit.js and follow.js.
  capabilities: ["annotate", "edit", "follow"],

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
