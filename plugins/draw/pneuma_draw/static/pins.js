// Review pins on a drawing (viewer contract, "Annotate"): a pin is the
// selection the viewer made ({file, elements: [{id, type, text}]}, or
// {file, elements: [], region: {x, y, width, height}} for a region of empty
// canvas the person dragged over); its
// marker is its number at the top right of the elements' common box, drawn
// over the canvas and moved with every scroll and zoom; its place is the
// elements' JSON in the file now. `pinMethods` are the viewer's methods for
// it (viewer.js assigns them to its prototype): showPins, renderPins,
// pinPlace, capturePin, revealPin and reveal (viewer contract, "Follow the agent").

import { blobToDataUrl, normalizePath, round } from "./drawing.js";
import { loadLibrary } from "./library.js";

const REGION_MIN_PX = 24; // a smaller drag over empty canvas is a click

/** Whether element `e` (x, y, width, height) meets the box `r`. */
function meets(e, r) {
  const x1 = Math.min(e.x, e.x + (e.width || 0));
  const y1 = Math.min(e.y, e.y + (e.height || 0));
  return x1 <= r.x + r.width && x1 + Math.abs(e.width || 0) >= r.x && y1 <= r.y + r.height && y1 + Math.abs(e.height || 0) >= r.y;
}

/** Whether `e` is one of a pin's elements: by id, or inside its region. */
function pinned(selection) {
  const ids = new Set((selection?.elements || []).map((e) => e.id));
  const region = selection?.region;
  return (e) => ids.has(e.id) || (e.type === "text" && e.containerId && ids.has(e.containerId))
    || Boolean(region && !ids.size && meets(e, region));
}

/** The pinned elements' JSON as the file `text` holds them ("" when none is
 * there): what a region holds changes when the agent draws into it. */
export function elementsJson(text, selection) {
  let doc;
  try {
    doc = JSON.parse(text);
  } catch {
    return "";
  }
  const found = (Array.isArray(doc?.elements) ? doc.elements : []).filter((e) => e && !e.isDeleted && pinned(selection)(e));
  return found.length ? JSON.stringify(found) : "";
}

/** The live elements of a pin, their bound labels with them. */
export function pinnedElements(api, selection) {
  return api.getSceneElements().filter(pinned(selection));
}

/** The scene box a pin's marker sits on: its elements', or its region's. */
function pinBox(api, lib, selection) {
  const elements = (selection?.elements || []).length ? pinnedElements(api, selection) : [];
  if (elements.length) return lib.getCommonBounds(elements);
  const r = selection?.region;
  return r ? [r.x, r.y, r.x + r.width, r.y + r.height] : null;
}

/** Numbered markers in `layer` for the pins on `file`, at the viewport
 * position of each one's elements (Excalidraw: (scene + scroll) × zoom).
 * Called on every change of the scene's view: a marker already there is
 * moved, not made again. */
export function placeMarkers(layer, { pins, file, api, lib, title, onClick }) {
  const old = new Map([...layer.children].map((el) => [el.dataset.pin, el]));
  const { scrollX, scrollY, zoom } = api ? api.getAppState() : {};
  for (const pin of api ? pins : []) {
    if (pin.selection?.file !== file) continue;
    const box = pinBox(api, lib, pin.selection);
    if (!box) continue;
    const [, y1, x2] = box;
    let marker = old.get(String(pin.id));
    old.delete(String(pin.id));
    if (!marker) {
      marker = document.createElement("button");
      marker.type = "button";
      marker.dataset.pin = String(pin.id);
      marker.addEventListener("click", () => onClick(marker.pin));
      layer.append(marker);
    }
    marker.pin = pin;
    marker.className = `pneuma-draw-pin pneuma-draw-pin-${pin.status || "open"}`;
    marker.textContent = String(pin.number);
    marker.title = title(pin);
    marker.style.left = `${(x2 + scrollX) * zoom.value}px`;
    marker.style.top = `${(y1 + scrollY) * zoom.value}px`;
  }
  for (const gone of old.values()) gone.remove();
}

/** The DrawViewer's methods for pins and following the agent (`this` is the viewer). */
export const pinMethods = {
  /** Excalidraw's pointer-up: a drag over empty canvas that selected no
   * element is the selection of that region. */
  onRegionDrag(tool, down) {
    if (tool?.type !== "selection" || !this.api || down?.hit?.element || !down?.origin || !down?.lastCoords) return;
    const { origin, lastCoords } = down;
    const region = { x: round(Math.min(origin.x, lastCoords.x)), y: round(Math.min(origin.y, lastCoords.y)),
      width: round(Math.abs(lastCoords.x - origin.x)), height: round(Math.abs(lastCoords.y - origin.y)) };
    if (Math.min(region.width, region.height) * this.api.getAppState().zoom.value < REGION_MIN_PX) return;
    const file = this.current;
    setTimeout(() => { // after Excalidraw settled the box-selection
      const ids = this.api?.getAppState().selectedElementIds || {};
      if (this.current !== file || Object.values(ids).some(Boolean)) return; // it selected elements: that is the selection
      this.selectionKey = `${file}|`; // the empty selection is this region's until another is made
      const name = file.split("/").pop().replace(/\.excalidraw$/i, "");
      this.ctx.setSelection?.({ file, elements: [], region,
        label: this.t("chip.region", { name, width: region.width, height: region.height }) });
    }, 0);
  },

  showPins(pins) {
    this.pins = Array.isArray(pins) ? pins : [];
    // A selection the shell made a pin of is the pin's now: a re-announcement
    // (after a switch of language or a reload of the file) would pin it again.
    const key = (s) => `${s.file}|${(s.elements || []).map((e) => e.id).sort().join(",")}`;
    if (this.pins.some((pin) => pin.selection && key(pin.selection) === this.selectionKey)) this.pinnedKey = this.selectionKey;
    this.renderPins();
  },

  renderPins() {
    placeMarkers(this.pinLayer, {
      pins: this.pins, file: this.current, api: this.api, lib: this.lib,
      title: (pin) => pin.comment || this.t("pin.title", { number: pin.number }),
      onClick: (pin) => this.revealPin(pin),
    });
  },

  pinPlace(selection, files) {
    const file = (files || this.ctx.files || []).find((f) => f.path === selection?.file);
    return file && typeof file.content === "string" ? elementsJson(file.content, selection) : "";
  },

  async capturePin(pin) {
    if (!(await this.reveal(pin?.selection?.file)) || !this.api || !this.synced) return null;
    const elements = pinnedElements(this.api, pin.selection);
    if (!elements.length) return null;
    const blob = await this.lib.exportToBlob({
      elements, files: this.api.getFiles(), mimeType: "image/png", exportPadding: 16,
      appState: { exportBackground: true, exportWithDarkMode: false, exportEmbedScene: false,
        viewBackgroundColor: this.api.getAppState().viewBackgroundColor || "#ffffff" },
    });
    return blobToDataUrl(blob);
  },

  async revealPin(pin) {
    if (!(await this.reveal(pin?.selection?.file)) || !this.api || !this.synced) return;
    const elements = pinnedElements(this.api, pin.selection);
    if (elements.length) {
      this.api.scrollToContent(elements, { fitToViewport: true, viewportZoomFactor: 0.6, maxZoom: 1, minZoom: 0.1, animate: false });
    }
  },

  async reveal(path) {
    const file = normalizePath(path);
    if (!file || !this.drawings.has(file)) return false;
    if (!this.lib) await loadLibrary();
    if (file !== this.current || !this.api) await this.open(file);
    else await this.ready;
    return this.current === file; // shown, as a drawing or as the reason it is not one
  }
};
