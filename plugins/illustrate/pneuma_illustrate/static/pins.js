// Review pins on images (viewer contract, "Annotate"): a numbered marker on
// each pinned image's card, the pinned place (the image's file and record),
// a PNG of the pinned image, and revealing a pin's image. `pinMethods` are
// the viewer's methods (viewer.js assigns them to its prototype).

import { findImage, readImages } from "./board.js";

const MAX_CAPTURE_SIDE = 1024;

function loadImage(url) {
  return new Promise((resolve, reject) => {
    const image = new Image();
    image.onload = () => resolve(image);
    image.onerror = () => reject(new Error("the image could not be loaded"));
    image.src = url;
  });
}

export const pinMethods = {
  showPins(pins) {
    this.pins = Array.isArray(pins) ? pins : [];
    this.renderPins();
  },

  renderPins() {
    if (!this.main) return;
    this.main.querySelectorAll(".il-pin").forEach((marker) => marker.remove());
    for (const pin of this.pins || []) {
      const id = pin.selection?.id;
      const card = id ? this.main.querySelector(`.il-card[data-image-id="${CSS.escape(id)}"]`) : null;
      if (!card) continue;
      const marker = document.createElement("button");
      marker.type = "button";
      marker.className = `il-pin il-pin-${pin.status || "open"}`;
      marker.textContent = String(pin.number);
      marker.dataset.pin = String(pin.id);
      marker.addEventListener("click", (event) => {
        event.stopPropagation();
        this.revealPin(pin);
      });
      card.append(marker);
    }
  },

  /** Changes when the pinned image is made again or its record changes. */
  pinPlace(selection, files) {
    const id = selection?.id;
    if (!id) return "";
    const { paths, records } = readImages(files || this.files);
    const version = (files || this.files).find((f) => f.path === paths.get(id))?.mtime ?? "";
    return paths.has(id) ? `${paths.get(id)} ${version} ${JSON.stringify(records.get(id) || null)}` : "";
  },

  async capturePin(pin) {
    const found = pin?.selection?.id ? findImage(this.view, pin.selection.id) : null;
    if (!found?.cell.path) return null;
    try {
      const image = await loadImage(this.ctx.contentUrl(found.cell.path));
      const scale = Math.min(1, MAX_CAPTURE_SIDE / Math.max(image.naturalWidth, image.naturalHeight));
      const canvas = document.createElement("canvas");
      canvas.width = Math.max(1, Math.round(image.naturalWidth * scale));
      canvas.height = Math.max(1, Math.round(image.naturalHeight * scale));
      canvas.getContext("2d").drawImage(image, 0, 0, canvas.width, canvas.height);
      return canvas.toDataURL("image/png");
    } catch {
      return null; // no picture: the pin's text still goes
    }
  },

  revealPin(pin) {
    const id = pin?.selection?.id;
    if (!id || !findImage(this.view, id)) return;
    this.open = id;
    this.render();
    this.main.querySelector(`.il-card[data-image-id="${CSS.escape(id)}"]`)?.scrollIntoView({ block: "center" });
  },
};
