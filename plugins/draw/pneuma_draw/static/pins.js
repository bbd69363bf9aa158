// Review pins on a drawing (viewer contract, "Annotate"): a pin is the
// selection the viewer made ({file, elements: [{id, type, text}]}); its
// marker is its number at the top right of the elements' common box, drawn
// over the canvas and moved with every scroll and zoom; its place is the
// elements' JSON in the file now.

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
 * position of each one's elements (Excalidraw: (scene + scroll) × zoom). */
export function placeMarkers(layer, { pins, file, api, lib, title, onClick }) {
  layer.replaceChildren();
  if (!api) return;
  const { scrollX, scrollY, zoom } = api.getAppState();
  for (const pin of pins) {
    if (pin.selection?.file !== file) continue;
    const elements = pinnedElements(api, pin.selection);
    if (!elements.length) continue;
    const [, y1, x2] = lib.getCommonBounds(elements);
    const marker = document.createElement("button");
    marker.type = "button";
    marker.className = `pneuma-draw-pin pneuma-draw-pin-${pin.status || "open"}`;
    marker.dataset.pin = String(pin.id);
    marker.textContent = String(pin.number);
    marker.title = title(pin);
    marker.style.left = `${(x2 + scrollX) * zoom.value}px`;
    marker.style.top = `${(y1 + scrollY) * zoom.value}px`;
    marker.addEventListener("click", () => onClick(pin));
    layer.append(marker);
  }
}
