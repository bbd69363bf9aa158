// The SlideViewer's side of "Annotate" (docs/viewer-contract.md, "Annotate"):
// numbered markers over the pinned elements of the slide on screen, a count
// on the thumbnails of slides with pins, a cropped picture of a pinned
// element, its markup as the slide's file has it now (so the shell can tell
// when the agent changed it), and going to a pin. Mixed into the viewer's
// prototype.

import { captureDocument, normalizePath } from "./slide-doc.js";
import { h } from "/static/lib/viewer-helpers.js";

const PIN_ICON = '<svg viewBox="0 0 24 24" width="10" height="10" aria-hidden="true" fill="none" stroke="currentColor"'
  + ' stroke-width="2.4" stroke-linecap="round"><path d="M12 21s-6-5.3-6-10a6 6 0 0 1 12 0c0 4.7-6 10-6 10z"/></svg>';
// Room kept around a pinned element in its picture, in slide pixels.
const CROP_MARGIN = 8;
const FLASH_MS = 1400;

/** The element a pin's selector names in a slide document (null when it is gone or the selector is bad). */
export function pinnedElement(doc, selection) {
  if (!doc || !doc.body) return null;
  if (!selection || !selection.selector) return doc.body.firstElementChild;
  try {
    return doc.body.querySelector(selection.selector);
  } catch {
    return null;
  }
}

function pinFile(pin) {
  const selection = pin && pin.selection;
  return selection && selection.file ? normalizePath(selection.file) : "";
}

function loadImage(src) {
  return new Promise((resolve, reject) => {
    const img = new Image();
    img.onload = () => resolve(img);
    img.onerror = () => reject(new Error("the slide picture could not be read"));
    img.src = src;
  });
}

/** A PNG data URL of `rect` (slide pixels) cut out of the slide picture `dataUrl`. */
async function cropPicture(dataUrl, rect) {
  const img = await loadImage(dataUrl);
  const canvas = document.createElement("canvas");
  canvas.width = Math.max(1, Math.round(rect.width));
  canvas.height = Math.max(1, Math.round(rect.height));
  canvas.getContext("2d").drawImage(img, rect.left, rect.top, rect.width, rect.height, 0, 0, rect.width, rect.height);
  return canvas.toDataURL("image/png");
}

export const annotating = {
  /** The shell's pins changed (or the slide on screen did): draw them again. */
  showPins(pins) {
    this.pins = Array.isArray(pins) ? pins.filter((p) => p && p.selection) : [];
    this.drawPins();
  },

  drawPins() {
    if (this.destroyed) return;
    const pins = this.pins || [];
    if (!this.pinLayer) {
      this.pinLayer = h("div", { class: "pns-pin-layer", "aria-hidden": "true" });
      this.stageBox.append(this.pinLayer);
    }
    this.pinLayer.replaceChildren(...this.stageMarkers(pins));
    for (const slot of [...this.thumbs, ...this.tiles]) this.paintPinCount(slot, pins);
  },

  /** Markers for the pins on the slide on screen, where their elements are drawn now. */
  stageMarkers(pins) {
    const slide = this.currentSlide;
    const doc = this.stageFrame.doc;
    const scale = this.stageScale || 0;
    if (!slide || !doc || !scale || this.view !== "single") return [];
    const boxW = this.size.width * scale;
    const markers = [];
    for (const pin of pins) {
      if (pinFile(pin) !== slide.file) continue;
      const el = pinnedElement(doc, pin.selection);
      if (!el) continue;
      const rect = el.getBoundingClientRect();
      const left = Math.min(Math.max(rect.left * scale - 11, 2), boxW - 24);
      const top = Math.max(rect.top * scale - 11, 2);
      markers.push(h("span", {
        class: `pns-pin-marker is-${pin.status || "open"}`,
        "data-pin": String(pin.id),
        title: pin.comment || "",
        style: `left:${Math.round(left)}px;top:${Math.round(top)}px`,
        text: String(pin.number ?? ""),
      }));
    }
    return markers;
  },

  /** The number of open or sent pins on a thumbnail's (or tile's) slide. */
  paintPinCount(slot, pins) {
    const file = slot.item.dataset.file;
    const count = pins.filter((p) => pinFile(p) === file && p.status !== "addressed").length;
    let badge = slot.pinCount;
    if (!badge) {
      badge = h("span", { class: "pns-pin-count" });
      slot.pinCount = badge;
      slot.item.querySelector(".pns-thumb-frame, .pns-tile-frame").append(badge);
    }
    badge.hidden = count === 0;
    badge.innerHTML = count ? PIN_ICON : "";
    if (count) badge.append(String(count));
    badge.title = count ? this.t("pins.count", { count }) : "";
  },

  /** A PNG of the pinned element (with a little room around it), or null when it cannot be drawn. */
  async capturePin(pin) {
    const file = pinFile(pin);
    const index = this.deck.slides.findIndex((s) => s.file === file);
    const slide = index >= 0 ? this.slideAt(index) : null;
    if (!slide || slide.missing) return null;
    const { width, height } = this.size;
    return this.renderOffscreen(slide, async (doc) => {
      const el = pinnedElement(doc, pin.selection);
      if (!el) return null;
      const box = el.getBoundingClientRect();
      const left = Math.max(0, Math.floor(box.left - CROP_MARGIN));
      const top = Math.max(0, Math.floor(box.top - CROP_MARGIN));
      const right = Math.min(width, Math.ceil(box.right + CROP_MARGIN));
      const bottom = Math.min(height, Math.ceil(box.bottom + CROP_MARGIN));
      if (right - left < 2 || bottom - top < 2) return null;
      const picture = await captureDocument(doc, { width, height, theme: this.theme });
      return cropPicture(picture, { left, top, width: right - left, height: bottom - top });
    });
  },

  /**
   * The pinned element's markup as the slide's file holds it now ("" when
   * it is gone); a pin without an element stands for the whole slide file.
   */
  pinPlace(selection, files) {
    const file = selection && selection.file ? normalizePath(selection.file) : "";
    const list = Array.isArray(files) ? files : [...this.files.values()];
    const entry = list.find((f) => f && normalizePath(f.path) === file);
    if (!entry || typeof entry.content !== "string") return "";
    if (!selection.selector) return entry.content;
    const doc = new DOMParser().parseFromString(`<!doctype html><body>${entry.content}`, "text/html");
    const el = pinnedElement(doc, selection);
    return el ? el.outerHTML : "";
  },

  /** Go to the pin's slide and make its element blink. */
  async revealPin(pin) {
    const file = pinFile(pin);
    const index = this.deck.slides.findIndex((s) => s.file === file);
    if (index < 0) return false;
    if (this.view !== "single" && !this.presenting) this.setView("single");
    this.go(index);
    const doc = await this.stageFrame.whenReady();
    const el = pinnedElement(doc, pin.selection);
    if (!el) return true;
    el.removeAttribute("data-pneuma-flash");
    void el.offsetWidth; // restart the animation when the same pin is revealed twice
    el.setAttribute("data-pneuma-flash", "");
    setTimeout(() => el.removeAttribute("data-pneuma-flash"), FLASH_MS);
    return true;
  },
};
