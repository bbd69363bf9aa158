// Review pins on a diagram (viewer contract, "Annotate"): numbered markers on
// the pinned nodes and edges, the place a pin stands for in the source now,
// and a cropped PNG of a pinned element.
//
// A pin's selection is the viewer's own selection ({file, kind, id, of,
// from, to, line, text}); the drawn elements are found again by what the
// source calls them (elementsOf), so markers follow a redraw. `pinMethods`
// are the viewer's methods for pins and following the agent (viewer.js
// assigns them to its prototype).

import { SourceText, plain } from "./source-text.js";

const SVG_NS = "http://www.w3.org/2000/svg";
const CAPTURE_PADDING = 12; // diagram units around the pinned element
const CAPTURE_SCALE = 2; // device pixels per diagram unit: small labels stay readable
const MAX_CAPTURE_SIDE = 2000;

/** The union of the elements' boxes, in the stage's own (unscaled) pixels. */
export function stageBox(stage, elements, scale) {
  const origin = stage.getBoundingClientRect();
  let box = null;
  for (const el of elements) {
    const r = el.getBoundingClientRect();
    if (!r.width && !r.height) continue;
    const b = { left: (r.left - origin.left) / scale, top: (r.top - origin.top) / scale,
      right: (r.right - origin.left) / scale, bottom: (r.bottom - origin.top) / scale };
    box = box ? { left: Math.min(box.left, b.left), top: Math.min(box.top, b.top),
      right: Math.max(box.right, b.right), bottom: Math.max(box.bottom, b.bottom) } : b;
  }
  return box;
}

/** Numbered markers at the top right of each pin's element on `file`;
 * `find(selection)` gives a selection's drawn elements. A marker already
 * there is moved, not made again (the shell hands the pins over often). */
export function drawMarkers(stage, layer, { pins, file, scale, find, onClick }) {
  const old = new Map([...layer.children].map((el) => [el.dataset.pin, el]));
  for (const pin of pins || []) {
    const s = pin.selection || {};
    if (s.file !== file) continue;
    const box = stageBox(stage, find(s), scale);
    if (!box) continue;
    let marker = old.get(String(pin.id));
    old.delete(String(pin.id));
    if (!marker) {
      marker = document.createElement("button");
      marker.type = "button";
      marker.dataset.pin = String(pin.id);
      marker.addEventListener("click", (event) => {
        event.stopPropagation();
        onClick?.(marker.pin);
      });
      marker.addEventListener("pointerdown", (event) => event.stopPropagation());
      layer.append(marker);
    }
    marker.pin = pin;
    marker.className = `dg-pin dg-pin-${pin.status || "open"}`;
    marker.textContent = String(pin.number);
    marker.style.left = `${box.right}px`;
    marker.style.top = `${box.top}px`;
  }
  for (const gone of old.values()) gone.remove();
}

/** The pinned place in `text` now: the source line that says it (found by
 * its id or its ends, not by its old line number, so a line added above
 * changes nothing), or "" when the source no longer says it. */
export function placeIn(text, s) {
  const src = new SourceText(text);
  let line = null;
  if (s.from && s.to) line = src.edgeLine(s.from, s.to, s.text);
  else if (s.kind === "member" && s.of) line = src.first((l) => l.includes(s.of) && plain(l).includes(plain(s.id)));
  else if (s.id && s.id !== "[*]") line = src.idLine(s.id);
  else if (s.text) line = src.textLine(s.text);
  return line ? src.code[line - 1].trim() : "";
}

/** HTML labels (foreignObject) as SVG text: a canvas refuses to read an
 * image back once it drew HTML inside an SVG. `originals` are the live
 * foreignObjects, in the same order, for their computed colour and font. */
function foreignToText(clone, originals) {
  [...clone.querySelectorAll("foreignObject")].forEach((fo, i) => {
    const live = originals[i];
    const inner = live ? [...live.querySelectorAll("*")].filter((el) => el.textContent.trim()).pop() || live : null;
    const look = inner ? getComputedStyle(inner) : null;
    const num = (name) => parseFloat(fo.getAttribute(name) || "0") || 0;
    const text = document.createElementNS(SVG_NS, "text");
    text.setAttribute("x", String(num("x") + num("width") / 2));
    text.setAttribute("y", String(num("y") + num("height") / 2));
    text.setAttribute("text-anchor", "middle");
    text.setAttribute("dominant-baseline", "central");
    if (look) {
      text.setAttribute("fill", look.color);
      text.setAttribute("font-size", look.fontSize);
      text.setAttribute("font-family", look.fontFamily);
    }
    text.textContent = (live || fo).textContent.replace(/\s+/g, " ").trim();
    fo.replaceWith(text);
  });
}

function loadImage(url) {
  return new Promise((resolve, reject) => {
    const image = new Image();
    image.onload = () => resolve(image);
    image.onerror = () => reject(new Error("the diagram could not be drawn as an image"));
    image.src = url;
  });
}

/** A PNG (data: URL) of the part of `svg` around `elements`, or null. */
export async function capture(svg, stage, elements, scale) {
  const box = stageBox(stage, elements, scale);
  const view = svg.viewBox?.baseVal;
  if (!box || !view || !view.width) return null;
  // the svg is drawn at one stage pixel per diagram unit from the viewBox's corner
  const svgBox = stageBox(stage, [svg], scale);
  const x = view.x + box.left - svgBox.left - CAPTURE_PADDING;
  const y = view.y + box.top - svgBox.top - CAPTURE_PADDING;
  const width = box.right - box.left + 2 * CAPTURE_PADDING;
  const height = box.bottom - box.top + 2 * CAPTURE_PADDING;
  const factor = Math.min(CAPTURE_SCALE, MAX_CAPTURE_SIDE / Math.max(width, height));
  const clone = svg.cloneNode(true);
  foreignToText(clone, [...svg.querySelectorAll("foreignObject")]);
  clone.setAttribute("viewBox", `${x} ${y} ${width} ${height}`);
  clone.setAttribute("width", String(Math.round(width * factor)));
  clone.setAttribute("height", String(Math.round(height * factor)));
  clone.querySelectorAll(".pneuma-selected").forEach((el) => el.classList.remove("pneuma-selected"));
  const markup = new XMLSerializer().serializeToString(clone);
  const url = URL.createObjectURL(new Blob([markup], { type: "image/svg+xml" }));
  try {
    const image = await loadImage(url);
    const canvas = document.createElement("canvas");
    canvas.width = Math.round(width * factor);
    canvas.height = Math.round(height * factor);
    const g = canvas.getContext("2d");
    g.fillStyle = getComputedStyle(stage.parentElement).backgroundColor || "#ffffff";
    g.fillRect(0, 0, canvas.width, canvas.height);
    g.drawImage(image, 0, 0, canvas.width, canvas.height);
    return canvas.toDataURL("image/png");
  } catch {
    return null; // a tainted canvas or an image that would not load: no picture, the pin still goes
  } finally {
    URL.revokeObjectURL(url);
  }
}

/** The elements of a selection in a redrawn svg, found by what the source
 * calls it (keys are numbered afresh in every drawing). */
export function elementsOf(svg, s) {
  const same = (el) => {
    const d = el.dataset;
    // a selection that went through JSON (a stored pin) has null or nothing for what it lacks
    return d.srcKind === s.kind && (d.srcId || "") === (s.id || "") && (d.srcOf || null) === (s.of || null)
      && (d.srcFrom || null) === (s.from || null)
      && (d.srcTo || null) === (s.to || null) && (s.id || s.from || (d.srcLabel || "") === (s.text || ""));
  };
  const all = [...svg.querySelectorAll("[data-src-kind]")].filter(same);
  // several alike (every [*] of a state diagram, a repeated message): the one on its line
  const first = all.find((el) => Number(el.dataset.srcLine) === s.line) || all[0];
  return first ? [...svg.querySelectorAll(`[data-src-key="${CSS.escape(first.dataset.srcKey)}"]`)] : [];
}

/** The DiagramViewer's methods for pins and following the agent (`this` is the viewer). */
export const pinMethods = {
  showPins(pins) {
    this.pins = Array.isArray(pins) ? pins : [];
    // A selection the shell made a pin of is the pin's now (its marker shows
    // it): no longer the viewer's to re-announce after a redraw, which would
    // pin it again.
    const same = (a, b) => ["file", "kind", "id", "of", "from", "to"].every((k) => (a[k] || null) === (b[k] || null));
    if (this.selected && this.pins.some((pin) => pin.selection && same(pin.selection, this.selected))) {
      this.clearSelection();
    }
    this.renderPins();
  },

  renderPins() {
    if (!this.svg) return this.pinLayer.replaceChildren();
    drawMarkers(this.stage, this.pinLayer, {
      pins: this.pins, file: this.active, scale: this.view.scale,
      find: (s) => elementsOf(this.svg, s), onClick: (pin) => this.revealPin(pin),
    });
  },

  pinPlace(selection, files) {
    const file = (files || this.ctx.files || []).find((f) => f.path === selection?.file);
    return file && !file.binary ? placeIn(file.content ?? "", selection) : "";
  },

  async capturePin(pin) {
    const s = pin?.selection;
    if (!s || !(await this.reveal(s.file)) || !this.svg) return null;
    const elements = elementsOf(this.svg, s);
    return elements.length ? capture(this.svg, this.stage, elements, this.view.scale) : null;
  },

  async revealPin(pin) {
    const s = pin?.selection;
    if (!s || !(await this.reveal(s.file)) || !this.svg) return;
    const elements = elementsOf(this.svg, s);
    if (!elements.length) return;
    this.centreOn(elements[0]);
    this.highlight(elements);
  },

  async reveal(path) {
    if (!this.files.has(path)) return false;
    this.open(path);
    await this.drawn;
    return true;
  },

  problems() {
    const found = {};
    for (const [path, error] of this.broken) {
      found[path] = this.brokenText(error);
    }
    return found;
  }
};
