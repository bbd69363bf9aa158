// Review pins on a drawing (viewer contract, "Annotate"): a pin is the
// selection the viewer made ({file, elements: [{id, type, text}]}); its
// marker is its number at the top right of the elements' common box, drawn
// over the canvas and moved with every scroll and zoom; its place is the
// elements' JSON in the file now. `pinMethods` are the viewer's methods for
// it (viewer.js assigns them to its prototype): showPins, renderPins,
// pinPlace, capturePin, revealPin and reveal (viewer contract, "Follow the agent").

import { blobToDataUrl, normalizePath } from "./drawing.js";
import { loadLibrary } from "./library.js";

/** The pinned elements' JSON as the file `text` holds them ("" when none is there). */
export function elementsJson(text, selection) {
  const ids = new Set((selection?.elements || []).map((e) => e.id));
  let doc;
  try {
    doc = JSON.parse(text);
  } catch {
    return "";
  }
  const found = (Array.isArray(doc?.elements) ? doc.elements : []).filter((e) => e && ids.has(e.id) && !e.isDeleted);
  return found.length ? JSON.stringify(found) : "";
}

/** The live elements of a pin, their bound labels with them. */
export function pinnedElements(api, selection) {
  const ids = new Set((selection?.elements || []).map((e) => e.id));
  return api.getSceneElements().filter((e) => ids.has(e.id) || (e.type === "text" && e.containerId && ids.has(e.containerId)));
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
    const elements = pinnedElements(api, pin.selection);
    if (!elements.length) continue;
    const [, y1, x2] = lib.getCommonBounds(elements);
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
