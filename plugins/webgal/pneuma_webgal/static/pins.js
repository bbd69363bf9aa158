// Review pins on a WebGAL script (viewer contract, "Annotate"): a pin is a
// line (or a range of lines) of a scene file, as the viewer selects it
// ({file, start, end}); its marker is its number in the gutter of its first
// line, its place the text of its lines now.

/** The text of a selection's lines in `content`, one per line. */
export function linesText(content, selection) {
  const lines = String(content ?? "").replace(/^\uFEFF/, "").replace(/\r/g, "").split("\n");
  const start = Math.min(selection.start, selection.end);
  const end = Math.max(selection.start, selection.end);
  return lines.slice(start - 1, end).join("\n");
}

/** Numbered markers in the gutters of `lines` (the script view's rows) for
 * the pins on `file`; a click on one calls `onClick(pin)`. */
export function markPins(lines, pins, file, { title, onClick }) {
  for (const old of lines.querySelectorAll(".wg-pin")) old.remove();
  for (const pin of pins) {
    const s = pin.selection || {};
    if (s.file !== file) continue;
    const row = lines.querySelector(`.wg-line[data-line="${Math.min(s.start, s.end)}"] .wg-gutter`);
    if (!row) continue;
    const marker = document.createElement("button");
    marker.type = "button";
    marker.className = `wg-pin wg-pin-${pin.status || "open"}`;
    marker.dataset.pin = String(pin.id);
    marker.textContent = String(pin.number);
    marker.title = title(pin);
    marker.addEventListener("click", (event) => {
      event.stopPropagation(); // not a click on the line (no new selection, no jump)
      onClick(pin);
    });
    row.prepend(marker);
  }
}
