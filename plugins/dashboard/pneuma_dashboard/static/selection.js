// What the person points at on the board, and how the agent is told: a
// chart's mark or a table's row (the datum's fields, the tile and its data
// file), or a whole tile (its id and type in dashboard.json). The context
// stays English whatever the page shows (viewer contract, "Language").

import { plainFields, plainValue } from "./data.js";

const MODE = "dashboard";
const MAX_CONTEXT_CHARS = 1500;

function escapeAttr(s) {
  return String(s).replace(/&/g, "&amp;").replace(/"/g, "&quot;").replace(/</g, "&lt;");
}

function escapeText(s) {
  return String(s).replace(/&/g, "&amp;").replace(/</g, "&lt;");
}

/** The <viewer-context> of a selection made by this viewer. */
export function contextOf(selection) {
  if (!selection) return "";
  const attrs = [`mode="${MODE}"`, `file="${escapeAttr(selection.file || "dashboard.json")}"`,
    `tile="${escapeAttr(selection.tile || "")}"`, `kind="${escapeAttr(selection.kind || "tile")}"`];
  if (selection.title) attrs.push(`title="${escapeAttr(selection.title)}"`);
  if (selection.row) attrs.push(`row="${Number(selection.row)}"`);
  const body = selection.fields ? JSON.stringify(selection.fields)
    : `${selection.type || "tile"} tile "${selection.tile}" in dashboard.json`;
  return `<viewer-context ${attrs.join(" ")}>${escapeText(body.slice(0, MAX_CONTEXT_CHARS))}</viewer-context>`;
}

/** The DashboardViewer's selection methods (`this` is the viewer). */
export const selectionMethods = {
  selectDatum(card, { datum, row }) {
    const tile = card.tile;
    this.select(card, { kind: row ? "row" : "datum", tile: tile.id, title: tile.title || tile.id, type: tile.type,
      file: tile.data, row: row || undefined, fields: plainFields(datum) });
  },

  selectTile(card) {
    const tile = card.tile;
    this.select(card, { kind: "tile", tile: tile.id, title: tile.title || tile.id, type: tile.type, file: "dashboard.json" });
  },

  select(card, selection) {
    this.highlight(card);
    this.selected = selection;
    this.ctx.setSelection?.({ ...selection, label: this.chipText(selection) });
  },

  highlight(card) {
    for (const el of this.grid.querySelectorAll(".pneuma-selected")) el.classList.remove("pneuma-selected");
    card?.element.classList.add("pneuma-selected");
  },

  /** The chip: tile · the datum's first fields (or the row number). */
  chipText(s) {
    const what = s.fields ? Object.entries(s.fields).slice(0, 3).map(([k, v]) => `${k}: ${plainValue(v)}`).join(", ") : null;
    const row = s.row ? this.t("selection.row", { row: s.row }) : null;
    return [s.title || s.tile, row, what].filter(Boolean).join(" · ");
  },

  clearSelection() {
    this.selected = null;
    this.highlight(null);
  },
};
