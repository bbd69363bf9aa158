// The diagram mode's viewer: every .mmd file of the workspace as a tab,
// drawn by mermaid (npm, bundled at setup into ./vendor/mermaid.iife.js), with
// zoom and pan, a light/dark theme, the parser's error at its line instead
// of a blank canvas, and click-to-point at nodes and edges.
//
// Implements the viewer contract (docs/viewer-contract.md): the default
// export has mount(element, ctx), extractContext(selection, files) and
// resolveItems(files); mount returns {update, runAction, clearSelection,
// destroy} and, for the capabilities "annotate", "edit" and "follow",
// {showPins, pinPlace, capturePin, revealPin, reveal, problems}. A label is
// edited in place with a double click (label-edit.js).

import { h, sharedStylesheet } from "/static/lib/viewer-helpers.js";
import { translator } from "./i18n.js";
import { replaceLabel } from "./label-edit.js";
import { elementsOf, pinMethods } from "./pins.js";
import { inFileLines } from "./source-lines.js";
import { mapSources } from "./source-map.js";

const MODE = "diagram";
const EXT = ".mmd";
const CSS_URL = new URL("./viewer.css", import.meta.url).href;
// One bundle serves the viewer and headless rendering (render.py): a classic
// script, because Chromium refuses ES modules from the file: URLs render.py uses.
const VENDOR_URL = new URL("./vendor/mermaid.iife.js", import.meta.url).href;
const HIDDEN_PREFIXES = [".pneuma/", ".claude/", ".git/", "node_modules/", "exports/"];
const MIN_ZOOM = 0.1;
const MAX_ZOOM = 8;
const NAV_WAIT_MS = 2500; // how long navigate-to waits for a file that is still being written
const DRAG_THRESHOLD_PX = 4;
const NOTE_MS = 6000; // how long a refused edit's note stays

let vendorPromise = null;
function loadMermaid() {
  vendorPromise ??= new Promise((resolve, reject) => {
    if (window.PneumaMermaid) return resolve(window.PneumaMermaid.mermaid);
    const script = document.createElement("script");
    script.src = VENDOR_URL;
    script.dataset.pneumaDiagram = "vendor";
    script.onload = () => (window.PneumaMermaid ? resolve(window.PneumaMermaid.mermaid)
      : reject(new Error("the mermaid bundle defined no PneumaMermaid")));
    script.onerror = () => {
      script.remove();
      vendorPromise = null; // a rebuilt bundle is picked up on the next draw
      reject(new Error(`cannot load ${VENDOR_URL}`));
    };
    document.head.append(script);
  });
  return vendorPromise;
}

const stylesheet = sharedStylesheet(CSS_URL, { "data-pneuma-diagram": "" });

function isDiagram(path) {
  if (!path.toLowerCase().endsWith(EXT)) return false;
  return !HIDDEN_PREFIXES.some((p) => path.startsWith(p) || path.includes("/" + p));
}

function diagramPaths(files) {
  return files.filter((f) => !f.binary && !f.deleted && isDiagram(f.path)).map((f) => f.path).sort();
}

function escapeAttr(s) {
  return String(s).replace(/&/g, "&amp;").replace(/"/g, "&quot;").replace(/</g, "&lt;");
}

function escapeText(s) {
  return String(s).replace(/&/g, "&amp;").replace(/</g, "&lt;");
}

/** mermaid's parse error as {message, line}, the line counted in the file
 * (mermaid counts after cutting front matter and comments). */
function parseError(text, e) {
  const hash = e?.hash || {};
  let line = hash.loc?.first_line ?? (hash.line != null ? hash.line + 1 : null);
  const message = String(e?.message || e);
  if (line == null) {
    const m = /\bline (\d+)/i.exec(message);
    line = m ? Number(m[1]) : null;
  }
  return inFileLines(text, { message, line });
}

function firstLine(text) {
  return String(text || "").split("\n")[0];
}

function prefersDark() {
  return Boolean(window.matchMedia && window.matchMedia("(prefers-color-scheme: dark)").matches);
}

// --- what was clicked --------------------------------------------------------------
// source-map.js marks every element that stands for something in the source
// (data-src-kind, -id, -label, -from, -to, -line, -key); a click picks the
// nearest marked element.

function selectionOf(element) {
  const d = element.dataset;
  return {
    kind: d.srcKind, id: d.srcId || "", label: d.srcLabel || "", of: d.srcOf || undefined,
    from: d.srcFrom || undefined, to: d.srcTo || undefined,
    line: d.srcLine ? Number(d.srcLine) : undefined, key: d.srcKey,
  };
}

/** The source element under `target` in the rendered `svg`, as a selection. */
function pickTarget(svg, target) {
  const marked = target.closest("[data-src-kind]");
  return marked && svg.contains(marked) ? selectionOf(marked) : null;
}

// The kinds that are things rather than connections, parts of a thing (a
// class's member) or a sequence's loop/alt/… frame: what describe-view lists
// as nodes and navigate-to can centre.
const THING = "[data-src-kind]:not([data-src-kind=edge]):not([data-src-kind=note])"
  + ":not([data-src-kind=member]):not([data-src-kind=block])";

function nodeIds(svg) {
  const ids = new Set();
  for (const el of svg.querySelectorAll(THING)) ids.add(el.dataset.srcId);
  ids.delete("");
  return [...ids];
}

function findNode(svg, id) {
  for (const el of svg.querySelectorAll(THING)) if (el.dataset.srcId === id) return el;
  return null;
}

// --- the viewer -------------------------------------------------------------------

class DiagramViewer {
  constructor(element, ctx) {
    this.root = element;
    this.ctx = ctx;
    this.t = translator(() => ctx.locale || "en");
    this.files = new Map(); // path → text
    this.active = null;
    this.theme = prefersDark() ? "dark" : "light";
    this.view = { scale: 1, x: 0, y: 0 };
    this.fitted = true; // a new render fits until the person zooms or pans
    this.status = null; // {path, ok, type, svg, error: {message, line}}
    this.renderSeq = 0;
    this.selected = null;
    this.missing = false;
    this.pins = []; // the review pins the shell shows (showPins)
    this.broken = new Map(); // path → {message, line} of a diagram that does not parse
    this.checked = new Map(); // path → the text last parsed for `broken`
    this.stopLocale = ctx.onLocaleChange ? ctx.onLocaleChange(() => this.relabel()) : null;
    this.build();
    this.ingest(ctx.files || []);
  }

  // DOM ------------------------------------------------------------------------------

  build() {
    const t = this.t;
    this.tabs = h("div", { class: "dg-tabs", role: "tablist" });
    this.zoomOut = h("button", { class: "dg-btn", type: "button", "data-act": "zoom-out", onclick: () => this.zoomBy(1 / 1.25) });
    this.zoomLabel = h("span", { class: "dg-zoom", "data-role": "zoom" });
    this.zoomIn = h("button", { class: "dg-btn", type: "button", "data-act": "zoom-in", onclick: () => this.zoomBy(1.25) });
    this.fitButton = h("button", { class: "dg-btn", type: "button", "data-act": "fit", onclick: () => this.fit() });
    this.themeButton = h("button", { class: "dg-btn", type: "button", "data-act": "theme",
      onclick: () => this.setTheme(this.theme === "dark" ? "light" : "dark") });
    this.toolbar = h("div", { class: "dg-toolbar" }, this.tabs,
      h("div", { class: "dg-tools" }, this.zoomOut, this.zoomLabel, this.zoomIn, this.fitButton, this.themeButton));
    this.stage = h("div", { class: "dg-stage" });
    // A role lets its aria-label be read (axe-core: aria-prohibited-attr on a bare div).
    this.canvas = h("div", { class: "dg-canvas", tabindex: "0", role: "group" }, this.stage);
    this.notice = h("div", { class: "dg-notice", hidden: true });
    this.pinLayer = h("div", { class: "dg-pins" });
    this.editNote = h("div", { class: "dg-edit-note", role: "status", hidden: true });
    this.shell = h("div", { class: "pneuma-diagram" }, this.toolbar, this.canvas, this.notice, this.editNote);
    this.root.replaceChildren(this.shell);
    this.bindCanvas();
    this.relabel();
  }

  relabel() {
    const t = this.t;
    this.tabs.setAttribute("aria-label", t("tabs.label"));
    this.toolbar.setAttribute("aria-label", t("toolbar.label"));
    this.canvas.setAttribute("aria-label", t("canvas.label"));
    this.zoomIn.textContent = "+";
    this.zoomIn.title = t("zoom.in");
    this.zoomIn.setAttribute("aria-label", t("zoom.in"));
    this.zoomOut.textContent = "−";
    this.zoomOut.title = t("zoom.out");
    this.zoomOut.setAttribute("aria-label", t("zoom.out"));
    this.fitButton.textContent = t("zoom.fit");
    this.fitButton.title = t("zoom.fitTitle");
    this.themeButton.textContent = this.theme === "dark" ? t("theme.toLight") : t("theme.toDark");
    this.themeButton.title = t("theme.title");
    this.renderNotice();
    this.renderError();
  }

  renderTabs() {
    const paths = [...this.files.keys()].sort();
    this.tabs.replaceChildren(...paths.map((path) => {
      const broken = this.broken.get(path);
      return h("button", {
        class: "dg-tab" + (path === this.active ? " active" : "") + (broken ? " broken" : ""), type: "button", role: "tab",
        "aria-selected": path === this.active ? "true" : "false", "data-path": path,
        title: broken ? this.brokenText(broken) : null,
        onclick: () => this.open(path),
      }, broken ? h("span", { class: "dg-tab-mark", "aria-hidden": "true" }, "⚠") : null, path.replace(/\.mmd$/i, ""));
    }));
  }

  /** One line on why a diagram does not parse (its tab's title, problems()). */
  brokenText(error) {
    const message = firstLine(error.message);
    return error.line ? this.t("tab.brokenAt", { line: error.line, message }) : this.t("tab.broken", { message });
  }

  renderNotice() {
    const t = this.t;
    if (this.missing) {
      this.notice.hidden = false;
      this.notice.replaceChildren(h("h3", { text: t("renderer.missingTitle") }),
        h("p", { text: t("renderer.missingBody", { install: "scripts/install", build: "npm ci && npm run build", folder: "plugins/diagram/web" }) }));
    } else if (!this.files.size) {
      this.notice.hidden = false;
      this.notice.replaceChildren(h("h3", { text: t("empty.title") }), h("p", { text: t("empty.body", { ext: EXT }) }));
    } else {
      this.notice.hidden = true;
      this.notice.replaceChildren();
    }
  }

  renderError() {
    const status = this.status;
    this.errorBox?.remove();
    this.errorBox = null;
    if (!status || status.ok || !status.error) return;
    const t = this.t;
    const { message, line } = status.error;
    const lines = (this.files.get(status.path) || "").split("\n");
    const listing = h("ol", { class: "dg-source" }, lines.map((text, i) =>
      h("li", { class: i + 1 === line ? "bad" : null, "data-line": String(i + 1) }, text || " ")));
    this.errorBox = h("div", { class: "dg-error", role: "alert", "data-line": line ?? "" },
      h("h3", { text: line ? t("error.title", { line }) : t("error.titleNoLine") }),
      h("pre", { class: "dg-message", text: message }),
      h("p", { class: "dg-source-title", text: t("error.source", { path: status.path }) }),
      listing);
    this.shell.append(this.errorBox);
    listing.querySelector(".bad")?.scrollIntoView({ block: "center" });
  }

  // files ------------------------------------------------------------------------------

  ingest(files) {
    this.files = new Map();
    for (const f of files) if (!f.binary && !f.deleted && isDiagram(f.path)) this.files.set(f.path, f.content ?? "");
    if (!this.active || !this.files.has(this.active)) {
      this.active = diagramPaths(files)[0] || null;
      this.fitted = true; // another diagram: show all of it
    }
    for (const path of [...this.broken.keys()]) if (!this.files.has(path)) this.broken.delete(path);
    this.renderTabs();
    this.renderNotice();
    this.draw();
    this.checkAll();
  }

  // Diagrams in the background are parsed too, so that one the agent broke
  // is marked on its tab before anyone opens it.
  async checkAll() {
    let mermaid;
    try {
      mermaid = await loadMermaid();
    } catch {
      return;
    }
    for (const [path, text] of this.files) {
      if (path === this.active || this.checked.get(path) === text) continue;
      let error = null;
      try {
        await mermaid.parse(text);
      } catch (e) {
        error = parseError(text, e);
      }
      if (this.files.get(path) === text) this.markChecked(path, text, error);
    }
  }

  markChecked(path, text, error) {
    this.checked.set(path, text);
    const was = this.broken.get(path);
    if (error) this.broken.set(path, error);
    else this.broken.delete(path);
    if (Boolean(was) !== Boolean(error) || (was && error && was.message !== error.message)) this.renderTabs();
  }

  // The agent edits while the person watches: redraw, keeping their zoom
  // and pan unless they had left the diagram fitted.
  update(files) {
    this.ingest(files || []);
  }

  open(path) {
    if (!this.files.has(path)) return false;
    if (path !== this.active) {
      this.active = path;
      this.fitted = true;
      this.clearSelection(true);
      this.renderTabs();
      this.draw();
    }
    this.ctx.setActiveFile?.(path);
    return true;
  }

  // drawing ----------------------------------------------------------------------------

  async draw() {
    const seq = ++this.renderSeq;
    const path = this.active;
    if (!path) {
      this.status = null;
      this.stage.replaceChildren();
      this.renderError();
      this.drawn = Promise.resolve();
      return;
    }
    const text = this.files.get(path);
    this.drawn = (async () => {
      let mermaid;
      try {
        mermaid = await loadMermaid();
      } catch {
        this.missing = true;
        this.renderNotice();
        return;
      }
      mermaid.initialize({ startOnLoad: false, securityLevel: "strict", theme: this.theme === "dark" ? "dark" : "default" });
      const id = `pneuma-dg-${seq}`;
      let status;
      try {
        await mermaid.parse(text);
        const { svg, diagramType } = await mermaid.render(id, text);
        status = { path, ok: true, type: diagramType, svg };
      } catch (e) {
        document.getElementById("d" + id)?.remove(); // mermaid's scratch element after a failure
        status = { path, ok: false, error: parseError(text, e) };
      }
      if (seq !== this.renderSeq) return; // a newer draw started meanwhile
      this.status = status;
      this.markChecked(path, text, status.ok ? null : status.error);
      this.shell.dataset.theme = this.theme;
      if (status.ok) {
        this.stage.innerHTML = status.svg;
        const svg = this.stage.querySelector("svg");
        const box = svg.viewBox?.baseVal;
        if (box && box.width) {
          svg.setAttribute("width", String(box.width));
          svg.setAttribute("height", String(box.height));
          svg.style.maxWidth = "none";
        }
        this.svg = svg;
        await mapSources(mermaid, text, svg, status.type);
        if (seq !== this.renderSeq) return;
        this.canvas.hidden = false;
        if (this.fitted) this.fit();
        else this.applyView();
        this.restoreSelection();
        this.stage.append(this.pinLayer);
        this.renderPins();
      } else {
        // keep the canvas out of the way: the error, at its line, is the view
        this.pinLayer.replaceChildren();
        this.svg = null;
        this.stage.replaceChildren();
        this.canvas.hidden = true;
      }
      this.renderError();
      this.shell.dataset.state = status.ok ? "rendered" : "error";
    })();
    return this.drawn;
  }

  // zoom and pan -----------------------------------------------------------------------

  applyView() {
    const { scale, x, y } = this.view;
    this.stage.style.transform = `translate(${x}px, ${y}px) scale(${scale})`;
    this.stage.style.setProperty("--dg-unscale", String(1 / scale)); // pin markers keep their size
    this.zoomLabel.textContent = `${Math.round(scale * 100)}%`;
  }

  naturalSize() {
    const box = this.svg?.viewBox?.baseVal;
    return box && box.width ? { w: box.width, h: box.height } : { w: 800, h: 600 };
  }

  fit() {
    const { w, h: height } = this.naturalSize();
    const cw = this.canvas.clientWidth || 800;
    const ch = this.canvas.clientHeight || 600;
    const scale = Math.max(MIN_ZOOM, Math.min(2, (cw - 32) / w, (ch - 32) / height));
    this.view = { scale, x: (cw - w * scale) / 2, y: (ch - height * scale) / 2 };
    this.fitted = true;
    this.applyView();
  }

  zoomTo(scale, cx, cy) {
    const s = Math.max(MIN_ZOOM, Math.min(MAX_ZOOM, scale));
    const cw = this.canvas.clientWidth || 800;
    const ch = this.canvas.clientHeight || 600;
    cx ??= cw / 2;
    cy ??= ch / 2;
    const { scale: old, x, y } = this.view;
    this.view = { scale: s, x: cx - ((cx - x) * s) / old, y: cy - ((cy - y) * s) / old };
    this.fitted = false;
    this.applyView();
  }

  zoomBy(factor, cx, cy) {
    this.zoomTo(this.view.scale * factor, cx, cy);
  }

  centreOn(element) {
    const svgBox = this.svg.getBoundingClientRect();
    const box = element.getBoundingClientRect();
    const canvas = this.canvas.getBoundingClientRect();
    const dx = canvas.left + canvas.width / 2 - (box.left + box.width / 2);
    const dy = canvas.top + canvas.height / 2 - (box.top + box.height / 2);
    if (svgBox.width) {
      this.view = { ...this.view, x: this.view.x + dx, y: this.view.y + dy };
      this.fitted = false;
      this.applyView();
    }
  }

  bindCanvas() {
    let drag = null;
    this.canvas.addEventListener("wheel", (e) => {
      e.preventDefault();
      const r = this.canvas.getBoundingClientRect();
      this.zoomBy(Math.exp(-e.deltaY * 0.0015), e.clientX - r.left, e.clientY - r.top);
    }, { passive: false });
    this.canvas.addEventListener("pointerdown", (e) => {
      if (e.button !== 0) return;
      drag = { x: e.clientX, y: e.clientY, vx: this.view.x, vy: this.view.y, moved: false, id: e.pointerId };
    });
    this.canvas.addEventListener("pointermove", (e) => {
      if (!drag) return;
      const dx = e.clientX - drag.x;
      const dy = e.clientY - drag.y;
      if (!drag.moved && Math.hypot(dx, dy) < DRAG_THRESHOLD_PX) return;
      if (!drag.moved) this.canvas.setPointerCapture?.(drag.id);
      drag.moved = true;
      this.view = { ...this.view, x: drag.vx + dx, y: drag.vy + dy };
      this.fitted = false;
      this.applyView();
    });
    const end = (e) => {
      const wasDrag = drag?.moved;
      drag = null;
      if (wasDrag) this.canvas.classList.add("dg-just-panned");
      else this.canvas.classList.remove("dg-just-panned");
      if (e.type === "pointercancel") this.canvas.classList.remove("dg-just-panned");
    };
    this.canvas.addEventListener("pointerup", end);
    this.canvas.addEventListener("pointercancel", end);
    this.canvas.addEventListener("click", (e) => {
      if (this.canvas.classList.contains("dg-just-panned")) {
        this.canvas.classList.remove("dg-just-panned");
        return;
      }
      if (!this.svg) return;
      const picked = pickTarget(this.svg, e.target);
      if (picked) this.select(picked);
      else this.clearSelection();
    });
    this.canvas.addEventListener("dblclick", (e) => {
      const marked = this.svg && e.target.closest("[data-src-kind]");
      if (!marked || !this.svg.contains(marked)) return;
      e.preventDefault();
      this.startEdit(selectionOf(marked));
    });
  }

  // edit in place ----------------------------------------------------------------------

  /** An input over the label of `picked`; Enter writes it into the source. */
  startEdit(picked) {
    this.cancelEdit();
    if (!picked.label) return this.showEditNote("edit.unmapped");
    const path = this.active;
    const elements = [...this.svg.querySelectorAll(`[data-src-key="${CSS.escape(picked.key)}"]`)];
    const label = elements.find((el) => el.matches("g.edgeLabel, g.node, text, g")) || elements[0];
    const box = label.getBoundingClientRect();
    const shell = this.shell.getBoundingClientRect();
    const input = h("input", { class: "dg-label-input", type: "text", value: picked.label,
      "aria-label": this.t("edit.label"), spellcheck: "false" });
    input.style.left = `${box.left - shell.left + box.width / 2}px`;
    input.style.top = `${box.top - shell.top + box.height / 2}px`;
    input.style.width = `${Math.max(120, box.width + 24)}px`;
    input.addEventListener("keydown", (e) => {
      if (e.key === "Enter") {
        e.preventDefault();
        this.commitEdit(path, picked, input.value);
      } else if (e.key === "Escape") {
        e.preventDefault(); // Esc here cancels the edit, not the agent's turn
        this.cancelEdit();
      }
    });
    input.addEventListener("blur", () => this.cancelEdit());
    this.editing = { input, path, base: this.files.get(path) };
    this.shell.dataset.editing = "true";
    this.shell.append(input);
    input.focus();
    input.select();
  }

  cancelEdit() {
    const editing = this.editing;
    if (!editing) return;
    this.editing = null;
    delete this.shell.dataset.editing;
    editing.input.remove();
  }

  async commitEdit(path, picked, value) {
    const base = this.editing?.base ?? this.files.get(path);
    this.cancelEdit();
    if (value.trim() === picked.label) return;
    const result = replaceLabel(base, { line: picked.line, id: picked.id }, picked.label, value);
    if (result.error) return this.showEditNote(result.error);
    // drawn at once; the file's echo (or, when refused, the files as they are) settles it
    this.files.set(path, result.content);
    this.draw();
    let answer;
    try {
      answer = this.ctx.editFile ? await this.ctx.editFile(path, result.content, { base })
        : await this.ctx.writeFile(path, result.content);
    } catch (error) {
      answer = { ok: false, code: error?.code, message: error?.message || String(error) };
    }
    if (answer?.ok !== false) return;
    this.ingest(this.ctx.files || []);
    // a conflict is the shell's to show, with both versions (viewer contract, "Edit in place")
    if (answer.code !== "E_CONFLICT") this.showEditNote("edit.failed", { message: answer.message || answer.code || "" });
  }

  showEditNote(key, params = {}) {
    clearTimeout(this.editNoteTimer);
    this.editNote.textContent = this.t(key, params);
    this.editNote.dataset.reason = key;
    this.editNote.hidden = false;
    this.editNoteTimer = setTimeout(() => {
      this.editNote.hidden = true;
    }, NOTE_MS);
  }

  // selection --------------------------------------------------------------------------

  select(picked) {
    const { kind, id, label, of, from, to, line, key } = picked;
    this.selected = { file: this.active, kind, id, of, from, to, line, text: label };
    this.highlight([...this.svg.querySelectorAll(`[data-src-key="${CSS.escape(key)}"]`)]);
    this.ctx.setSelection({ ...this.selected, label: this.chipText(this.selected) });
  }

  /** The context chip: file · what (id, from → to, or a member as the
   * source can write it, `Class : member`) · “label” · line. */
  chipText(s) {
    const what = s.from ? `${s.from} → ${s.to}` : s.of ? `${s.of} : ${s.id}` : s.id;
    return [s.file, what, s.text && s.text !== s.id ? `“${s.text}”` : null,
      s.line ? this.t("selection.line", { line: s.line }) : null].filter(Boolean).join(" · ");
  }

  highlight(elements) {
    for (const el of this.stage.querySelectorAll(".pneuma-selected")) el.classList.remove("pneuma-selected");
    for (const el of elements || []) el.classList.add("pneuma-selected");
  }

  // After a redraw (the agent edited the file): the same element lights up
  // again, and if the edit moved it to another line, the chip and the next
  // message say the new one.
  restoreSelection() {
    const s = this.selected;
    if (!s || s.file !== this.active || !this.svg) return;
    const elements = elementsOf(this.svg, s);
    this.highlight(elements);
    const line = elements[0]?.dataset.srcLine ? Number(elements[0].dataset.srcLine) : undefined;
    if (elements.length && line !== s.line) {
      this.selected = { ...s, line };
      this.ctx.setSelection({ ...this.selected, label: this.chipText(this.selected) });
    }
  }

  clearSelection(notifyShell = false) {
    this.selected = null;
    this.highlight(null);
    if (notifyShell) this.ctx.setSelection(null);
  }

  setTheme(theme) {
    this.theme = theme === "dark" ? "dark" : "light";
    this.relabel();
    return this.draw();
  }

  // actions -----------------------------------------------------------------------------

  async waitForFile(path) {
    const until = Date.now() + NAV_WAIT_MS;
    while (!this.files.has(path) && Date.now() < until) await new Promise((r) => setTimeout(r, 100));
    return this.files.has(path);
  }

  describe() {
    const s = this.status;
    return {
      file: this.active,
      type: s?.type ?? null,
      rendered: Boolean(s?.ok),
      error: s && !s.ok ? s.error : null,
      nodes: s?.ok && this.svg ? nodeIds(this.svg) : [],
      zoom: Math.round(this.view.scale * 100) / 100,
      theme: this.theme,
      selection: this.selected,
      tabs: [...this.files.keys()].sort(),
    };
  }

  async runAction(actionId, params = {}) {
    if (actionId === "navigate-to") {
      const file = String(params.file || "").replace(/^\.\//, "");
      if (!(await this.waitForFile(file))) {
        return { success: false, message: `No diagram ${file} in the workspace (diagrams: ${[...this.files.keys()].join(", ") || "none"})` };
      }
      this.open(file);
      this.fitted = true;
      await this.draw();
      const view = this.describe();
      if (params.node && view.rendered) {
        const node = findNode(this.svg, String(params.node));
        if (!node) return { success: false, message: `No node ${params.node} in ${file}; its nodes: ${view.nodes.join(", ")}`, data: view };
        this.centreOn(node);
        this.highlight([...this.svg.querySelectorAll(`[data-src-key="${CSS.escape(node.dataset.srcKey)}"]`)]);
      }
      const message = view.rendered
        ? `Showing ${file} (${view.type}, ${view.nodes.length} nodes)`
        : `Showing ${file}: it does not parse, line ${view.error?.line ?? "?"}: ${view.error?.message.split("\n")[0]}`;
      return { success: true, message, data: view };
    }
    if (actionId === "describe-view") {
      await this.drawn;
      const view = this.describe();
      const message = !view.file ? "No diagram is open (the workspace has no .mmd file)"
        : view.rendered ? `${view.file} is on screen (${view.type}) at ${Math.round(view.zoom * 100)}%, ${view.theme} theme`
          : `${view.file} is on screen with a syntax error at line ${view.error?.line ?? "?"}`;
      return { success: true, message, data: view };
    }
    if (actionId === "ui:set-theme") {
      if (!["light", "dark"].includes(params.theme)) return { success: false, message: "theme must be light or dark" };
      await this.setTheme(params.theme);
      return { success: true, message: `Theme: ${this.theme}`, data: { theme: this.theme } };
    }
    if (actionId === "ui:zoom") {
      const zoom = String(params.zoom ?? "fit");
      if (zoom === "fit") this.fit();
      else {
        const factor = Number(zoom);
        if (!(factor > 0)) return { success: false, message: "zoom must be fit or a positive factor such as 1.5" };
        this.zoomTo(factor);
      }
      return { success: true, message: `Zoom ${Math.round(this.view.scale * 100)}%`, data: { zoom: this.view.scale } };
    }
    return { success: false, message: `'${actionId}' is not supported by the diagram viewer` };
  }

  destroy() {
    this.cancelEdit();
    clearTimeout(this.editNoteTimer);
    this.stopLocale?.();
    this.root.replaceChildren();
  }
}

// showPins, renderPins, pinPlace, capturePin, revealPin, reveal, problems (pins.js)
Object.assign(DiagramViewer.prototype, pinMethods);

export default {
  capabilities: ["annotate", "edit", "follow"],

  async mount(element, ctx) {
    await stylesheet.acquire();
    const viewer = new DiagramViewer(element, ctx);
    return {
      update: (files, changes) => viewer.update(files, changes),
      runAction: (id, params) => viewer.runAction(id, params),
      clearSelection: () => viewer.clearSelection(),
      showPins: (pins) => viewer.showPins(pins),
      pinPlace: (selection, files) => viewer.pinPlace(selection, files),
      capturePin: (pin) => viewer.capturePin(pin),
      revealPin: (pin) => viewer.revealPin(pin),
      reveal: (path) => viewer.reveal(path),
      problems: () => viewer.problems(),
      destroy: () => {
        viewer.destroy();
        stylesheet.release();
      },
      viewer, // for tests and the console
    };
  },

  extractContext(selection) {
    if (!selection) return "";
    const attrs = [`mode="${MODE}"`, `file="${escapeAttr(selection.file || "")}"`];
    if (selection.kind) attrs.push(`kind="${escapeAttr(selection.kind)}"`);
    if (selection.of) attrs.push(`of="${escapeAttr(selection.of)}"`);
    if (selection.id) attrs.push(`id="${escapeAttr(selection.id)}"`);
    if (selection.from) attrs.push(`from="${escapeAttr(selection.from)}"`, `to="${escapeAttr(selection.to)}"`);
    if (selection.line) attrs.push(`line="${Number(selection.line)}"`);
    return `<viewer-context ${attrs.join(" ")}>${escapeText(String(selection.text ?? "").slice(0, 500))}</viewer-context>`;
  },

  resolveItems(files) {
    return diagramPaths(files).map((path, index) => ({ path, label: path.replace(/\.mmd$/i, ""), index }));
  },
};
