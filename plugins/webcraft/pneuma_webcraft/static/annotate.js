// The webcraft viewer's part in annotating and following the agent
// (docs/viewer-contract.md, "Annotate, edit in place, follow the agent"):
// numbered markers over the pinned elements, a pin's place as the page's
// source has it, showing a pin or a page, and pages with console errors
// marked on their tabs. Methods of WebcraftViewer (viewer.js), mixed in.
//
// The page runs on the content site's origin, so the viewer cannot look
// into it: the bridge reports where the pinned elements are (again after a
// scroll or resize) and the markers are drawn over the frame, never inside
// the page's own DOM. Those positions are untrusted numbers: only numbers
// reach the styles, only the pin's own number its text.

import { fetchJson, h } from "/static/lib/viewer-helpers.js";

const MARKER_LIMIT = 200;
const CROPS_URL = "/api/webcraft/crops";
const MAX_CROPS = 20; // a review carries at most 20 images
const CROP_BATCH_MS = 30_000; // the crops of one review, asked together, are kept this long

const croppable = (pin) => !!pin && pin.id != null && !!pin.selection
  && typeof pin.selection.page === "string" && typeof pin.selection.selector === "string" && !!pin.selection.selector;

/** A pin's selector and number as the bridge wants them, for `page`. */
function pinsOn(pins, page) {
  return pins.filter((pin) => pin.selection && pin.selection.page === page && typeof pin.selection.selector === "string")
    .slice(0, MARKER_LIMIT)
    .map((pin) => ({ n: Number(pin.number) || 0, selector: pin.selection.selector }));
}

let parser = null;

/** The element `selector` names in the page's source, parsed inertly (no
 * script runs in a DOMParser document); null when the source has none. */
function sourceElement(content, selector) {
  parser ??= new DOMParser();
  try {
    return parser.parseFromString(content, "text/html").querySelector(selector);
  } catch {
    return null; // not a selector this browser reads
  }
}

const finite = (value) => (Number.isFinite(value) ? value : 0);

export const annotate = {
  /** Markers for `pins` on the page on show ([] removes them). */
  showPins(pins) {
    this.pins = Array.isArray(pins) ? pins : [];
    for (const frame of this.frames) this.sendPins(frame);
  },

  sendPins(frame) {
    const pins = pinsOn(this.pins, this.page);
    frame.pinStatus = new Map(this.pins.map((pin) => [Number(pin.number) || 0, String(pin.status || "open")]));
    if (!pins.length) frame.drawPins([]);
    frame.post({ type: "pins", pins });
  },

  /** The pinned element's markup in the page's source now; the page's
   * source itself when it has no such element (the page's scripts made it). */
  pinPlace(selection, files) {
    const file = (files || this.files).find((f) => f.path === selection?.page);
    if (!file || typeof file.content !== "string") return "";
    const element = selection.selector ? sourceElement(file.content, selection.selector) : null;
    return element ? element.outerHTML : file.content;
  },

  /** The person clicked a pin in the review list: its page, scrolled to the element, flashed. */
  async revealPin(pin) {
    const selection = pin && pin.selection;
    if (!selection || !this.pagesNow().includes(selection.page)) return false;
    const frame = await this.show(selection.page);
    const result = await this.ask(frame, { type: "flash", selector: String(selection.selector || "") });
    return !!result.ok;
  },

  /** A PNG of the pinned element. The frame is another origin, which this
   * page cannot draw; the server crops it instead, from Chromium rendering a
   * private copy of the site with the network closed (render.py, as the
   * agent's capture_screenshot does). The shell asks once per pin, one after
   * another, when a review is sent: the first question asks for every open
   * pin at once (one browser, one load per page and width). */
  async capturePin(pin) {
    if (!croppable(pin)) return null;
    const key = String(pin.id);
    if (!this.cropBatch || !this.cropBatch.keys.has(key)) this.cropBatch = this.askCrops(pin);
    const images = await this.cropBatch.images;
    const url = images[key];
    return typeof url === "string" && url.startsWith("data:image/png;base64,") ? url : null;
  },

  askCrops(first) {
    const pins = [first, ...this.pins.filter((p) => p.id !== first.id && p.status === "open" && croppable(p))].slice(0, MAX_CROPS);
    const crops = pins.map((p) => ({
      key: String(p.id), page: p.selection.page, selector: p.selection.selector, viewport: p.selection.viewport || "desktop",
    }));
    const images = fetchJson(CROPS_URL, { method: "POST", json: { crops } })
      .then((body) => (body && body.images && typeof body.images === "object" ? body.images : {}))
      .catch(() => ({}));
    const batch = { keys: new Set(crops.map((c) => c.key)), images };
    setTimeout(() => { if (this.cropBatch === batch) this.cropBatch = null; }, CROP_BATCH_MS);
    return batch;
  },

  /** Bring `path` to the front: a page opens in its tab; a file the open
   * page uses (its stylesheet, a script) is on show already. */
  async reveal(path) {
    if (this.pagesNow().includes(path)) {
      await this.show(path);
      return true;
    }
    return !!(this.uses && this.uses.has(path));
  },

  /** Pages whose console reported errors: {page: "Console errors: 3 · the first"}, in the page's language (the shell shows it). */
  problems() {
    const found = {};
    for (const error of this.errors) {
      const entry = found[error.page] ||= { count: 0, first: error.message };
      entry.count += 1;
    }
    return Object.fromEntries(Object.entries(found).map(([page, { count, first }]) =>
      [page, this.t("problems.console", { count, message: first.slice(0, 160) })]));
  },
};

/** PreviewFrame's markers: a layer over the frame, one badge per pin found. */
export const pinLayer = {
  drawPins(boxes) {
    this.pinBoxes = boxes;
    const scale = this.size ? this.size.scale : 1;
    const markers = (Array.isArray(boxes) ? boxes : []).slice(0, MARKER_LIMIT)
      .filter((box) => box && box.found && finite(box.width) + finite(box.height) > 0)
      .map((box) => h("span", {
        class: "webcraft-pin-marker", "data-pin": String(Number(box.n) || 0),
        "data-status": this.pinStatus ? this.pinStatus.get(Number(box.n) || 0) || "open" : "open",
        style: `left:${Math.round(finite(box.x) * scale)}px;top:${Math.round(finite(box.y) * scale)}px`,
      }, String(Number(box.n) || 0)));
    this.pinLayer.replaceChildren(...markers);
  },
};
