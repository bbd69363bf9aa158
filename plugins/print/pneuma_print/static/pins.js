// The PrintViewer's side of "Annotate" (docs/viewer-contract.md,
// "Annotate"): numbered markers over the pinned elements of every sheet, the
// pinned element's markup as its place, going to a pin. Pins need no
// picture: capturePin answers null and the review goes as text. Mixed into
// the viewer's prototype.

import { normalizePath } from "./print-doc.js";
import { h } from "/static/lib/viewer-helpers.js";

function elementOf(sheet, selection) {
  const doc = sheet && sheet.doc;
  if (!doc || !selection || !selection.selector) return null;
  try {
    return doc.querySelector(selection.selector);
  } catch {
    return null;
  }
}

export const annotating = {
  showPins(pins) {
    this.pins = Array.isArray(pins) ? pins.filter((p) => p && p.selection && p.selection.file) : [];
    this.drawPins();
  },

  sheetOfFile(file) {
    const path = normalizePath(file);
    return this.sheets.find((s) => s.page && s.page.file === path) || null;
  },

  drawPins() {
    if (this.destroyed) return;
    for (const sheet of this.sheets) sheet.markers.replaceChildren();
    for (const pin of this.pins || []) {
      const sheet = this.sheetOfFile(pin.selection.file);
      const el = elementOf(sheet, pin.selection);
      if (!sheet || !el) continue;
      const box = sheet.boxOf(el);
      sheet.markers.append(h("button", {
        class: `pnp-pin pnp-pin--${pin.status || "open"}`, type: "button", text: String(pin.number),
        style: `left:${box.left}px;top:${box.top}px`, onclick: () => this.revealPin(pin),
      }));
    }
  },

  async capturePin() {
    return null;
  },

  pinPlace(selection, files) {
    const sheet = selection && selection.file ? this.sheetOfFile(selection.file) : null;
    const el = elementOf(sheet, selection);
    if (el) return el.outerHTML;
    const entry = (files || []).find((f) => selection && normalizePath(f.path) === normalizePath(selection.file));
    return entry && typeof entry.content === "string" ? entry.content : "";
  },

  revealPin(pin) {
    const sheet = pin && pin.selection ? this.sheetOfFile(pin.selection.file) : null;
    if (!sheet) return;
    this.go(sheet.position - 1);
    const el = elementOf(sheet, pin.selection);
    if (el) {
      el.setAttribute("data-pneuma-hover", "");
      setTimeout(() => el.removeAttribute("data-pneuma-hover"), 1400);
    }
  },
};
