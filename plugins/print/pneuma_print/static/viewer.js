// The print mode's viewer (docs/viewer-contract.md, docs/print.md): the
// document of print.json as true sheets of paper, one below the other, at a
// zoom; a list of the pages beside them; the page in view as the viewer's
// context; a click points at an element, a double-click edits its text.

import {
  PRINT_JSON,
  STYLESHEET,
  contentBox,
  describeElement,
  normalizePath,
  oneLine,
  pageNumber,
  paperLabel,
  parsePrintJson,
  shellHasCjkFont,
} from "./print-doc.js";
import { translator } from "./i18n.js";
import { Sheet } from "./sheet.js";
import { agentActions, unreadableLine } from "./actions.js";
import { annotating } from "./pins.js";
import { editingInPlace } from "./edit.js";
import { h, sharedStylesheet } from "/static/lib/viewer-helpers.js";

const STYLE = sharedStylesheet(new URL("./viewer.css", import.meta.url).href, { "data-pneuma-print": "" });
export const ZOOMS = ["fit-width", "fit-page", "50", "75", "100", "125", "150", "200"];
const GAP_PX = 24;

function escapeHtml(text) {
  return String(text).replace(/[&<>"]/g, (ch) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;" })[ch]);
}

class PrintViewer {
  constructor(element, ctx) {
    this.el = element;
    this.ctx = ctx;
    this.readOnly = !!ctx.readOnly;
    this.t = translator(() => ctx.locale || "en");
    this.baseUrl = ctx.baseUrl || "/content/";
    this.cjkFont = shellHasCjkFont();
    this.files = new Map();
    this.doc = null; // the last good print.json, read
    this.problem = null; // {error (English), key, params}
    this.sheets = [];
    this.current = 0;
    this.zoomMode = "fit-width";
    this.zoom = 1;
    this.selection = null; // {file, page, el, info}
    this.pins = [];
    this.destroyed = false;
    this.build();
    this.setFiles(ctx.files || []);
    this.render();
    this.stopLocale = ctx.onLocaleChange ? ctx.onLocaleChange(() => this.relabel()) : null;
    this.resize = new ResizeObserver(() => this.relayout());
    this.resize.observe(this.scroller);
    queueMicrotask(() => this.announce()); // the first page is in view from the start
  }

  build() {
    this.titleEl = h("span", { class: "pnp-title" });
    this.paperEl = h("span", { class: "pnp-paper-label" });
    this.counter = h("span", { class: "pnp-counter" });
    this.zoomSelect = h("select", { class: "pnp-zoom", onchange: () => this.setZoom(this.zoomSelect.value) });
    this.toolbar = h("div", { class: "pnp-toolbar" }, this.titleEl, this.paperEl, h("span", { class: "pnp-spacer" }),
      this.counter, this.zoomSelect);
    this.banner = h("div", { class: "pnp-banner", role: "alert", hidden: true });
    this.list = h("nav", { class: "pnp-list" });
    this.column = h("div", { class: "pnp-column" });
    this.scroller = h("div", { class: "pnp-scroller", onscroll: () => this.onScroll() }, this.column);
    this.root = h("div", { class: "pnp-root" + (this.readOnly ? " is-readonly" : "") }, this.toolbar, this.banner,
      h("div", { class: "pnp-body" }, this.list, this.scroller));
    this.el.append(this.root);
    this.relabel();
  }

  relabel() {
    this.zoomSelect.replaceChildren(...ZOOMS.map((z) => h("option", { value: z, selected: z === this.zoomMode },
      /^\d+$/.test(z) ? `${z}%` : this.t(`zoom.${z}`))));
    this.zoomSelect.setAttribute("aria-label", this.t("zoom.label"));
    this.list.setAttribute("aria-label", this.t("list.label"));
    this.renderChrome();
    for (const sheet of this.sheets) if (sheet.fit) sheet.measure();
  }

  // -- files

  setFiles(list) {
    this.files = new Map();
    for (const f of list) if (f && f.path) this.files.set(normalizePath(f.path), f);
    const entry = this.files.get(PRINT_JSON);
    const parsed = parsePrintJson(entry && typeof entry.content === "string" ? entry.content : undefined);
    if (parsed.ok) {
      this.doc = parsed.doc;
      this.problem = null;
    } else {
      // The last good document stays on screen while print.json is broken.
      this.problem = { error: parsed.error, key: parsed.errorKey, params: parsed.errorParams || {} };
      if (parsed.missing) this.doc = null;
    }
    const style = this.files.get(STYLESHEET);
    this.stylesheet = style && typeof style.content === "string" ? style.content : "";
  }

  fragmentOf(file) {
    const entry = this.files.get(file);
    return entry && typeof entry.content === "string" ? entry.content : null;
  }

  /** Why a listed page cannot be drawn ("missing", "notText"), or null. */
  unreadable(file) {
    const entry = this.files.get(file);
    if (!entry) return "missing";
    return typeof entry.content === "string" ? null : "notText";
  }

  // -- rendering

  render() {
    const doc = this.doc;
    const pages = doc ? doc.pages : [];
    while (this.sheets.length > pages.length) this.sheets.pop().el.remove();
    while (this.sheets.length < pages.length) {
      const sheet = new Sheet(this, this.sheets.length + 1);
      this.sheets.push(sheet);
      this.column.append(sheet.el);
    }
    pages.forEach((page, i) => {
      const why = this.unreadable(page.file);
      const said = why === "notText" ? this.t("sheet.notText", { file: page.file }) : this.t("sheet.missing", { file: page.file });
      const shown = why ? `<p style="color:#b42318">${escapeHtml(said)}</p>` : this.fragmentOf(page.file);
      this.sheets[i].missing = why;
      this.sheets[i].paint(page, shown, this.stylesheet, pageNumber(doc, i + 1));
    });
    this.current = Math.min(this.current, Math.max(0, pages.length - 1));
    this.relayout();
    this.renderChrome();
  }

  renderChrome() {
    const doc = this.doc;
    this.titleEl.textContent = doc ? doc.title || this.t("untitled") : "";
    this.paperEl.textContent = doc ? paperLabel(doc) : "";
    this.counter.textContent = doc && doc.pages.length
      ? this.t("counter", { page: this.current + 1, count: doc.pages.length }) : "";
    const problem = this.problem;
    this.banner.hidden = !problem && !!doc;
    this.banner.textContent = problem ? this.t(problem.key, problem.params) : doc ? "" : this.t("problem.missing");
    this.list.replaceChildren(...(doc ? doc.pages : []).map((page, i) => {
      const sheet = this.sheets[i];
      const over = sheet && sheet.fit && sheet.fit.overflows;
      return h("button", {
        class: "pnp-item" + (i === this.current ? " is-current" : "") + (over ? " is-overflowing" : ""),
        type: "button", "data-page": String(i + 1), title: page.file, onclick: () => this.go(i),
      }, h("span", { class: "pnp-item-n" }, String(i + 1)), h("span", { class: "pnp-item-title" }, page.title));
    }));
  }

  zoomFor(mode) {
    const doc = this.doc;
    if (!doc) return 1;
    const pxPerMm = 96 / 25.4;
    const width = Math.max(100, this.scroller.clientWidth - 2 * GAP_PX);
    const height = Math.max(100, this.scroller.clientHeight - 2 * GAP_PX);
    const byWidth = width / (doc.width * pxPerMm);
    if (mode === "fit-width") return byWidth;
    if (mode === "fit-page") return Math.min(byWidth, height / (doc.height * pxPerMm));
    return Math.min(2, Math.max(0.5, Number(mode) / 100));
  }

  relayout() {
    if (!this.doc || this.destroyed) return;
    this.zoom = this.zoomFor(this.zoomMode) || 1;
    for (const sheet of this.sheets) sheet.layout(this.doc, this.zoom);
    this.drawPins();
  }

  setZoom(mode) {
    const value = String(mode).replace(/%$/, "");
    if (!ZOOMS.includes(value) && !(Number(value) >= 50 && Number(value) <= 200)) return false;
    const keep = this.current;
    this.zoomMode = value;
    this.relayout();
    this.relabel();
    this.scrollToPage(keep, "instant");
    return true;
  }

  afterPaint(sheet) {
    if (this.selection && this.selection.file === sheet.page.file) this.restoreSelection(sheet);
    this.renderChrome();
    this.drawPins();
  }

  // -- the page in view

  onScroll() {
    // A scroll the viewer started passes other pages on its way: the page
    // it goes to stays the page in view.
    if (this.scrolling) return;
    const top = this.scroller.scrollTop + this.scroller.clientHeight / 3;
    let index = 0;
    for (const [i, sheet] of this.sheets.entries()) if (sheet.el.offsetTop <= top) index = i;
    if (index !== this.current) {
      this.current = index;
      this.renderChrome();
      this.announce();
    }
  }

  announce() {
    const sheet = this.sheets[this.current];
    if (!sheet || !sheet.page || this.readOnly || this.destroyed) return;
    if (this.ctx.setActiveFile) this.ctx.setActiveFile(sheet.page.file);
    if (!this.selection) this.publishSelection();
  }

  scrollToPage(index, behavior = "smooth") {
    const sheet = this.sheets[index];
    if (!sheet) return;
    const top = Math.min(sheet.el.offsetTop - GAP_PX, this.scroller.scrollHeight - this.scroller.clientHeight);
    if (Math.abs(this.scroller.scrollTop - top) < 1) return;
    this.scrolling = true;
    clearTimeout(this.scrollTimer);
    const done = () => { this.scrolling = false; clearTimeout(this.scrollTimer); };
    this.scroller.addEventListener("scrollend", done, { once: true });
    this.scrollTimer = setTimeout(done, 1500);
    this.scroller.scrollTo({ top, behavior });
  }

  go(index) {
    if (index < 0 || index >= this.sheets.length) return;
    this.current = index;
    this.scrollToPage(index);
    this.renderChrome();
    this.announce();
  }

  /** A page named by its 1-based number or its file: its index, or -1. */
  indexOf(page) {
    if (!this.doc) return -1;
    const text = String(page === undefined || page === null ? "" : page).trim();
    if (/^\d+$/.test(text)) {
      const n = Number(text);
      return n >= 1 && n <= this.doc.pages.length ? n - 1 : -1;
    }
    const file = normalizePath(text);
    return this.doc.pages.findIndex((p) => p.file === file);
  }

  // -- pointing

  wireFrame(sheet, doc) {
    doc.addEventListener("click", (e) => this.onFrameClick(e, sheet, doc));
    doc.addEventListener("dblclick", (e) => this.onFrameDoubleClick(e, sheet, doc));
    doc.addEventListener("mouseover", (e) => this.mark(doc, e.target, "data-pneuma-hover"));
    doc.addEventListener("mouseleave", () => this.mark(doc, null, "data-pneuma-hover"));
    doc.addEventListener("keydown", (e) => this.forwardUndoKey(e));
  }

  mark(doc, el, attr) {
    for (const old of doc.querySelectorAll(`[${attr}]`)) old.removeAttribute(attr);
    if (el && el.nodeType === 1 && el !== doc.body && el !== doc.documentElement) el.setAttribute(attr, "");
  }

  onFrameClick(e, sheet, doc) {
    if (this.editing && this.editing.el.contains(e.target)) return;
    e.preventDefault(); // links in a page do not navigate the frame
    if (e.detail > 1 || this.readOnly) return;
    let el = e.target && e.target.nodeType === 1 ? e.target : null;
    if (!el || el === doc.documentElement) return;
    if (el === doc.body) el = doc.body.firstElementChild;
    if (!el) return;
    this.current = sheet.position - 1;
    if (this.selection && this.selection.el === el) {
      this.clearSelection();
      return;
    }
    this.clearMarks();
    el.setAttribute("data-pneuma-selected", "");
    this.selection = { file: sheet.page.file, page: sheet.position, el, info: describeElement(el) };
    this.publishSelection();
    this.renderChrome();
  }

  clearMarks() {
    for (const sheet of this.sheets) if (sheet.doc) this.mark(sheet.doc, null, "data-pneuma-selected");
  }

  clearSelection() {
    this.clearMarks();
    this.selection = null;
    this.publishSelection();
  }

  /** After a repaint, mark the selected element again by its CSS path. */
  restoreSelection(sheet) {
    const sel = this.selection;
    let el = null;
    try { el = sheet.doc.querySelector(sel.info.selector); } catch { el = null; }
    if (!el) return;
    sel.el = el;
    el.setAttribute("data-pneuma-selected", "");
  }

  /** The selection chip: the element pointed at, or (auto) the page in view. */
  publishSelection() {
    if (!this.ctx.setSelection || this.readOnly) return;
    const doc = this.doc;
    const sel = this.selection;
    if (sel) {
      const page = doc.pages[sel.page - 1];
      this.ctx.setSelection({ file: sel.file, page: sel.page, title: page ? page.title : "", ...sel.info,
        label: `${this.t("chip.page", { page: sel.page })} · <${sel.info.tag}> ${oneLine(sel.info.text, 40)}` });
      return;
    }
    const sheet = this.sheets[this.current];
    if (!sheet || !sheet.page) return;
    this.ctx.setSelection({ auto: true, file: sheet.page.file, page: sheet.position, title: sheet.page.title,
      label: `${this.t("chip.page", { page: sheet.position })} · ${sheet.page.title}` });
  }

  // -- the contract

  update(files) {
    this.setFiles(files);
    this.render();
  }

  async reveal(path) {
    const index = this.indexOf(normalizePath(path));
    if (index < 0) return false;
    this.go(index);
    return true;
  }

  problems() {
    const found = {};
    for (const sheet of this.sheets) {
      if (sheet.missing) found[sheet.page.file] = unreadableLine(sheet);
      else if (sheet.fit && sheet.fit.overflows) found[sheet.page.file] = this.overflowLine(sheet);
    }
    return found;
  }

  destroy() {
    this.destroyed = true;
    this.resize.disconnect();
    if (this.stopLocale) this.stopLocale();
    this.root.remove();
    STYLE.release();
  }

  get contentBoxMm() {
    return this.doc ? contentBox(this.doc) : null;
  }
}

Object.assign(PrintViewer.prototype, agentActions, annotating, editingInPlace);

function attr(value) {
  return String(value).replace(/&/g, "&amp;").replace(/"/g, "&quot;").replace(/</g, "&lt;");
}

export default {
  capabilities: ["annotate", "edit", "follow"],

  async mount(element, ctx) {
    await STYLE.acquire();
    return new PrintViewer(element, ctx);
  },

  extractContext(selection, files) {
    if (!selection || !selection.file) return "";
    const file = normalizePath(selection.file);
    const entry = (files || []).find((f) => normalizePath(f.path) === PRINT_JSON);
    const parsed = parsePrintJson(entry ? entry.content : undefined);
    const pages = parsed.ok ? parsed.doc.pages : [];
    const index = pages.findIndex((p) => p.file === file);
    const number = index >= 0 ? index + 1 : selection.page;
    const title = index >= 0 ? pages[index].title : selection.title;
    const lines = [];
    if (number) lines.push(`Page ${number} of ${pages.length || "?"}: "${oneLine(title)}"${parsed.ok ? ` (${paperLabel(parsed.doc)})` : ""}`);
    if (selection.selector) {
      const classes = Array.isArray(selection.classes) && selection.classes.length ? ` class="${selection.classes.join(" ")}"` : "";
      lines.push(`Selected: <${selection.tag || "element"}${classes}> "${oneLine(selection.text)}"`);
      lines.push(`Selector: ${oneLine(selection.selector)}`);
    }
    const pageAttr = number ? ` page="${number}"` : "";
    return `<viewer-context mode="print" file="${attr(file)}"${pageAttr}>\n${lines.join("\n")}\n</viewer-context>`;
  },

  resolveItems(files) {
    const entry = (files || []).find((f) => normalizePath(f.path) === PRINT_JSON);
    const parsed = parsePrintJson(entry ? entry.content : undefined);
    if (!parsed.ok) return [];
    return parsed.doc.pages.map((p, i) => ({ path: p.file, label: `${i + 1}. ${p.title}`, index: i, metadata: { title: p.title } }));
  },
};
