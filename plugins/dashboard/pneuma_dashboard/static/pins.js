// Review pins on the board (viewer contract, "Annotate"): a numbered marker
// at the top right of each pinned tile, the pinned place as the tile's
// definition in dashboard.json (plus the datum, for a pinned mark or row),
// a PNG of a pinned chart, and following the agent to the tile it changed.

import { BOARD_FILE, readBoard, tileDefinition } from "./board.js";

function boardTiles(files) {
  const file = (files || []).find((f) => f.path === BOARD_FILE && !f.binary);
  return file ? readBoard(file.content ?? "").board?.tiles || [] : [];
}

/** The DashboardViewer's methods for pins and following the agent (`this` is the viewer). */
export const pinMethods = {
  showPins(pins) {
    this.pins = Array.isArray(pins) ? pins : [];
    this.renderPins();
  },

  renderPins() {
    for (const marker of this.grid.querySelectorAll(".db-pin")) marker.remove();
    for (const pin of this.pins || []) {
      const card = this.cards.get(pin.selection?.tile);
      if (!card) continue;
      const marker = document.createElement("button");
      marker.type = "button";
      marker.className = `db-pin db-pin-${pin.status || "open"}`;
      marker.dataset.pin = String(pin.id);
      marker.textContent = String(pin.number);
      marker.addEventListener("pointerdown", (e) => e.stopPropagation());
      marker.addEventListener("click", (e) => {
        e.stopPropagation();
        this.revealPin(pin);
      });
      card.element.append(marker);
    }
  },

  /** Changes when the pinned tile's definition changes (or it goes away). */
  pinPlace(selection, files) {
    const tile = boardTiles(files || this.ctx.files).find((t) => t.id === selection?.tile);
    if (!tile) return "";
    return tileDefinition(tile) + (selection.fields ? JSON.stringify(selection.fields) : "");
  },

  async capturePin(pin) {
    const card = this.cards.get(pin?.selection?.tile);
    if (!card) return null;
    await card.done;
    const view = card.drawn?.view;
    if (!view) return null;
    try {
      return await view.toImageURL("png", 2);
    } catch {
      return null; // no picture; the pin's text still goes
    }
  },

  async revealPin(pin) {
    const card = this.cards.get(pin?.selection?.tile);
    if (!card) return;
    card.element.scrollIntoView({ block: "nearest" });
    this.highlight(card);
  },

  /** dashboard.json: the board is the view; a data file: its first tile. */
  async reveal(path) {
    await this.ready;
    if (path === BOARD_FILE) {
      const card = this.cards.get(this.lastChanged?.[0]);
      card?.element.scrollIntoView({ block: "nearest" });
      return this.text !== null;
    }
    const card = [...this.cards.values()].find((c) => c.tile.data === path);
    if (!card) return false;
    card.element.scrollIntoView({ block: "nearest" });
    return true;
  },

  problems() {
    const found = {};
    if (this.boardError) found[BOARD_FILE] = this.boardError.message;
    for (const card of this.cards.values()) {
      if (!card.error) continue;
      const path = card.errorFile || BOARD_FILE;
      found[path] ??= `tile "${card.tile.id}": ${card.error}`;
    }
    return found;
  },
};
