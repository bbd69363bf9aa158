// The dashboard mode's viewer: the tiles of dashboard.json on a grid of
// `columns` × `rowHeight`, each drawn from its data file under data/ —
// Vega-Lite charts by vega-embed (bundled at setup into
// ./vendor/vega.iife.js), tables, key numbers and Markdown notes. The person
// drags a tile by its title bar and resizes it by its corner (written back
// into dashboard.json as four numbers, board-text.js), double-clicks a title
// to rename the tile, and clicks a mark, a row or a tile to point the agent
// at it. A tile that cannot draw says why inside itself.
//
// Implements the viewer contract (docs/viewer-contract.md): mount returns
// {update, runAction, clearSelection, destroy} and, for "annotate", "edit"
// and "follow", {showPins, pinPlace, capturePin, revealPin, reveal, problems}.

import { h, sharedStylesheet } from "/static/lib/viewer-helpers.js";
import { translator } from "./i18n.js";
import { BOARD_FILE, readBoard, tileDefinition } from "./board.js";
import { editTile, moveTile } from "./board-text.js";
import { DataCache } from "./data.js";
import { drawChart, drawMarkdown, drawNumber, drawTable } from "./tiles.js";
import { followDrag, placeTile, stacked } from "./grid-drag.js";
import { pinMethods } from "./pins.js";
import { actionMethods } from "./actions.js";
import { selectionMethods, contextOf } from "./selection.js";

const CSS_URL = new URL("./viewer.css", import.meta.url).href;
// One bundle serves the viewer and headless rendering (exports, checks): a
// classic script, because Chromium refuses ES modules from file: URLs.
const VENDOR_URL = new URL("./vendor/vega.iife.js", import.meta.url).href;
const NOTE_MS = 6000;
const RESIZE_REDRAW_MS = 200;

let vendorPromise = null;
function loadVega() {
  vendorPromise ??= new Promise((resolve, reject) => {
    if (window.PneumaVega) return resolve(window.PneumaVega);
    const script = document.createElement("script");
    script.src = VENDOR_URL;
    script.dataset.pneumaDashboard = "vendor";
    script.onload = () => (window.PneumaVega ? resolve(window.PneumaVega)
      : reject(new Error("the vega bundle defined no PneumaVega")));
    script.onerror = () => {
      script.remove();
      vendorPromise = null; // a rebuilt bundle is picked up on the next draw
      reject(new Error(`cannot load ${VENDOR_URL}`));
    };
    document.head.append(script);
  });
  return vendorPromise;
}

const stylesheet = sharedStylesheet(CSS_URL, { "data-pneuma-dashboard": "" });

function boardText(files) {
  const file = (files || []).find((f) => f.path === BOARD_FILE && !f.deleted && !f.binary);
  return file ? file.content ?? "" : null;
}

class DashboardViewer {
  constructor(element, ctx) {
    this.root = element;
    this.ctx = ctx;
    this.readOnly = Boolean(ctx.readOnly);
    this.t = translator(() => ctx.locale || "en");
    this.text = null; // dashboard.json as last drawn
    this.board = null;
    this.boardError = null;
    this.cards = new Map(); // tile id → {tile, element, body, def, status, error, drawn, done}
    this.selected = null;
    this.pins = [];
    this.vendor = null;
    this.missing = false;
    this.stopLocale = ctx.onLocaleChange ? ctx.onLocaleChange(() => this.relabel()) : null;
    this.build();
    this.ready = loadVega().then((vendor) => {
      this.vendor = vendor;
      this.data = new DataCache(ctx, vendor.vega);
    }, () => {
      this.missing = true;
    }).then(() => this.ingest(ctx.files || [], null));
  }

  // DOM ------------------------------------------------------------------------------

  build() {
    this.heading = h("h2", { class: "db-title" });
    this.hint = h("span", { class: "db-hint" });
    this.notice = h("div", { class: "db-notice", hidden: true });
    this.errorBox = h("div", { class: "db-board-error", role: "alert", hidden: true });
    this.grid = h("div", { class: "db-grid" });
    this.editNote = h("div", { class: "db-edit-note", role: "status", hidden: true });
    // Focusable: the board scrolls, and a keyboard must reach it (axe-core: scrollable-region-focusable).
    this.shell = h("div", { class: "pneuma-dashboard" + (this.readOnly ? " db-readonly" : ""), tabindex: "0" },
      h("header", { class: "db-header" }, this.heading, this.hint), this.notice, this.errorBox, this.grid, this.editNote);
    this.root.replaceChildren(this.shell);
    this.resizeObserver = new ResizeObserver(() => {
      clearTimeout(this.resizeTimer);
      this.resizeTimer = setTimeout(() => this.redrawCharts(), RESIZE_REDRAW_MS);
    });
    this.resizeObserver.observe(this.grid);
    this.gridWidth = 0;
    // the charts' theme follows the system's scheme (tiles.js), as the shell's colours do
    this.scheme = globalThis.matchMedia?.("(prefers-color-scheme: dark)") ?? null;
    this.onScheme = () => this.redrawAllCharts();
    this.scheme?.addEventListener("change", this.onScheme);
    this.relabel();
  }

  relabel() {
    const t = this.t;
    this.grid.setAttribute("aria-label", t("grid.label"));
    this.hint.textContent = this.readOnly ? "" : t("hint");
    this.renderNotice();
    this.renderBoardError();
    for (const card of this.cards.values()) this.labelCard(card);
    if (this.selected) this.ctx.setSelection?.({ ...this.selected, label: this.chipText(this.selected), auto: true });
  }

  renderNotice() {
    const t = this.t;
    let title = null;
    let body = null;
    if (this.missing) [title, body] = [t("renderer.missingTitle"), t("renderer.missingBody", { install: "scripts/install" })];
    else if (this.text === null) [title, body] = [t("empty.title"), t("empty.body", { file: BOARD_FILE })];
    this.notice.hidden = !title;
    this.notice.replaceChildren(...(title ? [h("h3", { text: title }), h("p", { text: body })] : []));
  }

  renderBoardError() {
    const error = this.boardError;
    this.errorBox.hidden = !error;
    if (!error) return this.errorBox.replaceChildren();
    this.errorBox.replaceChildren(
      h("h3", { text: error.line ? this.t("board.errorAt", { line: error.line }) : this.t("board.error") }),
      h("pre", { class: "db-message", text: error.message }));
  }

  // files ------------------------------------------------------------------------------

  update(files, changes) {
    this.ready.then(() => this.ingest(files || this.ctx.files || [], changes));
  }

  /** Redraw what changed: the board's tiles whose definition changed, and
   * the tiles over a data file that changed; a moved tile only moves. */
  ingest(files, changes) {
    const text = boardText(files);
    const changedData = new Set((changes || []).map((c) => c.path).filter((p) => p !== BOARD_FILE));
    if (text !== this.text) {
      this.text = text;
      const { board, error } = text === null ? { board: null, error: null } : readBoard(text);
      this.boardError = error;
      if (board) this.board = board;
      else if (text === null) this.board = null;
      this.renderBoardError();
    }
    this.renderNotice();
    this.heading.textContent = this.board?.title || "";
    this.layout(files, changedData);
  }

  layout(files, changedData) {
    const board = this.board;
    const tiles = board && !this.missing ? board.tiles : [];
    this.grid.style.setProperty("--db-columns", String(board?.columns ?? 12));
    this.grid.style.setProperty("--db-row", `${board?.rowHeight ?? 80}px`);
    const keep = new Set(tiles.map((t) => t.id));
    const changed = [];
    const fresh = this.cards.size === 0;
    for (const [id, card] of this.cards) {
      if (!keep.has(id)) {
        card.drawn?.finalize?.();
        card.element.remove();
        this.cards.delete(id);
      }
    }
    for (const [position, tile] of tiles.entries()) {
      let card = this.cards.get(tile.id);
      const def = tileDefinition(tile);
      const resized = card && (card.tile.w !== tile.w || card.tile.h !== tile.h);
      if (!card) {
        if (!fresh) changed.push(tile.id); // added to a board on screen
        card = this.makeCard(tile);
      } else if (card.def !== def) changed.push(tile.id);
      const redraw = card.def !== def || (tile.data && changedData.has(tile.data))
        || (resized && tile.type === "chart");
      card.tile = tile;
      placeTile(card.element, tile);
      // File order is reading order. Moved only when out of place: moving an
      // element takes the focus from an open title edit inside it.
      const there = this.grid.children[position] || null;
      if (there !== card.element) this.grid.insertBefore(card.element, there);
      if (redraw) {
        card.def = def;
        this.drawCard(card, files);
      }
      this.labelCard(card);
    }
    if (changed.length) this.lastChanged = changed; // what follow-the-agent shows
    this.renderPins?.();
  }

  makeCard(tile) {
    const titleText = h("span", { class: "db-tile-title" });
    const bar = h("div", { class: "db-tile-bar" }, titleText);
    const body = h("div", { class: "db-tile-body" });
    const corner = h("div", { class: "db-resize", "aria-hidden": "true" });
    const element = h("section", { class: "db-tile", "data-tile": tile.id, "data-type": tile.type }, bar, body,
      this.readOnly ? null : corner);
    const card = { tile, element, bar, titleText, body, def: null, status: "loading", error: null, drawn: null, done: null };
    if (!this.readOnly) {
      bar.addEventListener("pointerdown", (e) => this.startDrag(e, card, "move"));
      corner.addEventListener("pointerdown", (e) => this.startDrag(e, card, "resize"));
      titleText.addEventListener("dblclick", (e) => this.startTitleEdit(e, card));
    }
    element.addEventListener("click", (e) => {
      if (e.dbPicked || e.target.closest("input, a, .db-pin")) return;
      this.selectTile(card);
    });
    this.cards.set(tile.id, card);
    return card;
  }

  labelCard(card) {
    const tile = card.tile;
    card.titleText.textContent = tile.title || tile.id;
    card.element.dataset.state = card.status;
    card.bar.title = this.readOnly ? "" : this.t("tile.dragTitle");
  }

  drawCard(card, files) {
    const tile = card.tile;
    card.drawn?.finalize?.();
    card.drawn = null;
    card.status = "loading";
    card.error = null;
    card.element.dataset.state = "loading";
    const seq = (card.seq = (card.seq ?? 0) + 1);
    card.done = (async () => {
      let drawn = null;
      let error = tile.error;
      let rowCount = null;
      let errorFile = "dashboard.json";
      if (!error) {
        try {
          let rows = [];
          if (tile.type !== "markdown") {
            const loaded = await this.data.rows(tile.data, files);
            if (loaded.error) {
              errorFile = tile.data;
              throw new Error(loaded.error);
            }
            rows = loaded.rows;
          }
          if (seq !== card.seq) return;
          rowCount = tile.type === "markdown" ? null : rows.length;
          drawn = await this.drawBody(card, rows);
        } catch (e) {
          error = String(e?.message || e);
        }
      }
      if (seq !== card.seq) {
        drawn?.finalize?.();
        return;
      }
      card.drawn = drawn;
      card.rowCount = rowCount;
      card.status = error ? "error" : "rendered";
      card.error = error;
      card.errorFile = errorFile;
      if (error) card.body.replaceChildren(h("div", { class: "db-tile-error", role: "alert" }, h("pre", { text: error })));
      card.element.dataset.state = card.status;
      this.renderPins?.();
    })();
    return card.done;
  }

  drawBody(card, rows) {
    const tile = card.tile;
    const pick = (fields) => (datum, item, event) => {
      if (event) event.dbPicked = true;
      this.selectDatum(card, fields(datum, item));
    };
    if (tile.type === "chart") {
      return drawChart(card.body, tile, rows, this.vendor, (datum, item, event) => {
        pick((d) => ({ datum: d }))(datum, item, event);
        event?.target?.classList?.add("pneuma-selected"); // the mark itself, as a table marks its row
      });
    }
    if (tile.type === "table") {
      return drawTable(card.body, tile, rows, (row, index, event) => {
        event.dbPicked = true;
        this.selectDatum(card, { datum: row, row: index + 1 });
        card.body.querySelector(`tr[data-row="${index}"]`)?.classList.add("pneuma-selected");
      });
    }
    if (tile.type === "number") return drawNumber(card.body, tile, rows, this.vendor);
    return drawMarkdown(card.body, tile);
  }

  redrawCharts() {
    const width = this.grid.clientWidth;
    if (!width || width === this.gridWidth) return;
    const first = this.gridWidth === 0;
    this.gridWidth = width;
    if (!first) this.redrawAllCharts();
  }

  redrawAllCharts() {
    for (const card of this.cards.values()) if (card.tile.type === "chart" && !card.tile.error) this.drawCard(card, this.ctx.files || []);
  }

  // layout edits -----------------------------------------------------------------------

  startDrag(event, card, kind) {
    if (event.button !== 0 || this.editing || !this.board || this.boardError) return;
    if (stacked(this.grid, this.board.columns)) return;
    const others = this.board.tiles.filter((t) => t.id !== card.tile.id);
    followDrag(event, {
      element: card.element, grid: this.grid, tile: card.tile, kind,
      columns: this.board.columns, rowHeight: this.board.rowHeight, others,
      onDrop: (box) => this.writeBoard((text) => moveTile(text, card.tile.id, box), "edit.moveFailed"),
    });
  }

  startTitleEdit(event, card) {
    event.preventDefault();
    event.stopPropagation();
    if (this.editing || this.boardError) return;
    const input = h("input", { class: "db-title-input", type: "text", value: card.tile.title || "",
      "aria-label": this.t("edit.label"), spellcheck: "false" });
    const done = (save) => {
      if (this.editing?.input !== input) return;
      this.editing = null;
      delete card.element.dataset.pneumaBusy;
      input.remove();
      card.titleText.hidden = false;
      const value = input.value.trim();
      if (save && value && value !== card.tile.title) {
        this.writeBoard((text) => editTile(text, card.tile.id, { title: value }), "edit.titleFailed");
      }
    };
    input.addEventListener("keydown", (e) => {
      e.stopPropagation();
      if (e.key === "Enter") done(true);
      else if (e.key === "Escape") {
        e.preventDefault(); // Esc here cancels the edit, not the agent's turn
        done(false);
      }
    });
    input.addEventListener("pointerdown", (e) => e.stopPropagation());
    input.addEventListener("blur", () => done(false));
    this.editing = { input, card };
    card.element.dataset.pneumaBusy = "";
    card.titleText.hidden = true;
    card.bar.prepend(input);
    input.focus();
    input.select();
  }

  /** Write `change(text)` of dashboard.json as the person's edit; shown at
   * once, settled by the file's echo (or put back when refused). */
  async writeBoard(change, failKey) {
    const base = this.text;
    let content;
    try {
      content = change(base);
    } catch (e) {
      this.showNote(failKey, { message: e.message });
      this.layout(this.ctx.files || [], new Set());
      return;
    }
    this.ingest([{ path: BOARD_FILE, content }, ...(this.ctx.files || []).filter((f) => f.path !== BOARD_FILE)], []);
    let answer;
    try {
      answer = this.ctx.editFile ? await this.ctx.editFile(BOARD_FILE, content, { base })
        : await this.ctx.writeFile(BOARD_FILE, content);
    } catch (error) {
      answer = { ok: false, code: error?.code, message: error?.message || String(error) };
    }
    if (answer?.ok !== false) return;
    this.ingest(this.ctx.files || [], []);
    // a conflict is the shell's to show, with both versions (viewer contract, "Edit in place")
    if (answer.code !== "E_CONFLICT") this.showNote(failKey, { message: answer.message || answer.code || "" });
  }

  showNote(key, params = {}) {
    clearTimeout(this.noteTimer);
    this.editNote.textContent = this.t(key, params);
    this.editNote.dataset.reason = key;
    this.editNote.hidden = false;
    this.noteTimer = setTimeout(() => {
      this.editNote.hidden = true;
    }, NOTE_MS);
  }

  destroy() {
    this.resizeObserver.disconnect();
    this.scheme?.removeEventListener("change", this.onScheme);
    clearTimeout(this.resizeTimer);
    clearTimeout(this.noteTimer);
    for (const card of this.cards.values()) card.drawn?.finalize?.();
    this.stopLocale?.();
    this.root.replaceChildren();
  }
}

// selectDatum, selectTile, clearSelection, chipText (selection.js); runAction
// and its actions (actions.js); showPins … problems (pins.js)
Object.assign(DashboardViewer.prototype, selectionMethods, actionMethods, pinMethods);

export default {
  capabilities: ["annotate", "edit", "follow"],

  async mount(element, ctx) {
    await stylesheet.acquire();
    const viewer = new DashboardViewer(element, ctx);
    await viewer.ready;
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
    return contextOf(selection);
  },

  resolveItems(files) {
    return boardText(files) === null ? [] : [{ path: BOARD_FILE, label: BOARD_FILE, index: 0 }];
  },
};
