// Moving and resizing a tile on the board's grid with the pointer: the tile
// follows in whole grid cells, stays inside the columns, and may not land
// on another tile (it shows red there and goes back on release).

import { overlaps } from "./board.js";

const THRESHOLD_PX = 3;

/** Place `element` at grid box `box` ({x, y, w, h}, 0-based). */
export function placeTile(element, box) {
  element.style.gridColumn = `${box.x + 1} / span ${box.w}`;
  element.style.gridRow = `${box.y + 1} / span ${box.h}`;
  element.style.setProperty("--db-h", String(box.h)); // its height when the board is stacked (viewer.css)
}

/** True when the board is drawn one tile a row (a narrow window, viewer.css). */
export function stacked(grid, columns) {
  return columns > 1 && getComputedStyle(grid).gridTemplateColumns.trim().split(/\s+/).length === 1;
}

/** The grid's cell pitch in pixels: {x, y} from one column or row to the next. */
function pitch(grid, columns, rowHeight) {
  const style = getComputedStyle(grid);
  const gapX = parseFloat(style.columnGap) || 0;
  const gapY = parseFloat(style.rowGap) || 0;
  const inner = grid.clientWidth - (parseFloat(style.paddingLeft) || 0) - (parseFloat(style.paddingRight) || 0);
  return { x: (inner + gapX) / columns, y: rowHeight + gapY };
}

/** The box a drag of (dx, dy) pixels makes of `start`. */
export function draggedBox(start, kind, cells, columns) {
  if (kind === "resize") {
    return { x: start.x, y: start.y,
      w: Math.max(1, Math.min(columns - start.x, start.w + cells.x)), h: Math.max(1, start.h + cells.y) };
  }
  return { x: Math.max(0, Math.min(columns - start.w, start.x + cells.x)), y: Math.max(0, start.y + cells.y),
    w: start.w, h: start.h };
}

/**
 * Follow the pointer from `event` (a pointerdown on a tile's title bar or
 * corner). `options`: {element, grid, tile, kind: "move"|"resize", columns,
 * rowHeight, others: [{x, y, w, h}], onDrop(box)}. `onDrop` is called only
 * for a box that differs from the tile's and overlaps no other tile.
 */
export function followDrag(event, options) {
  const { element, grid, tile, kind, columns, rowHeight, others, onDrop } = options;
  const start = { x: tile.x, y: tile.y, w: tile.w, h: tile.h };
  const step = pitch(grid, columns, rowHeight);
  const origin = { x: event.clientX, y: event.clientY };
  // Followed on the window rather than by pointer capture: a capture would
  // retarget the click and double-click that end a press without a move
  // (the title's rename) to the handle.
  const pointer = event.pointerId;
  let box = start;
  let moved = false;

  const onMove = (e) => {
    if (e.pointerId !== pointer) return;
    const dx = e.clientX - origin.x;
    const dy = e.clientY - origin.y;
    if (!moved && Math.hypot(dx, dy) < THRESHOLD_PX) return;
    if (!moved) element.classList.add("db-dragging");
    moved = true;
    box = draggedBox(start, kind, { x: Math.round(dx / step.x), y: Math.round(dy / step.y) }, columns);
    placeTile(element, box);
    element.classList.toggle("db-blocked", others.some((o) => overlaps(o, box)));
  };
  const finish = (e) => {
    if (e.pointerId !== pointer) return;
    window.removeEventListener("pointermove", onMove);
    window.removeEventListener("pointerup", finish);
    window.removeEventListener("pointercancel", finish);
    element.classList.remove("db-dragging", "db-blocked");
    const same = box.x === start.x && box.y === start.y && box.w === start.w && box.h === start.h;
    const blocked = others.some((o) => overlaps(o, box));
    if (e.type === "pointercancel" || same || blocked) {
      placeTile(element, start);
      return;
    }
    onDrop(box);
  };
  window.addEventListener("pointermove", onMove);
  window.addEventListener("pointerup", finish);
  window.addEventListener("pointercancel", finish);
  event.preventDefault(); // no text selection while dragging
}
