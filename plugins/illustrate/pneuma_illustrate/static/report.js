// What the viewer tells the agent about the board (describe-view,
// get-choices): plain data in English, the same in a tab and in the
// headless viewer.

import { isBlank, promptOf, readChoices } from "./board.js";

/** The board as the person sees it now. */
export function describeView(viewer) {
  const view = viewer.view;
  const marks = viewer.marks();
  const ids = (test) => Object.entries(marks).filter(([, m]) => test(m)).map(([id]) => id);
  const problems = [view.error, ...view.warnings, readChoices(viewer.files).error, unreadable(viewer)].filter(Boolean);
  return {
    title: view.title,
    rows: view.rows.map((row) => ({
      id: row.unlisted ? null : row.id,
      title: row.unlisted ? null : row.title,
      onBoard: !row.unlisted,
      prompt: row.prompt,
      images: row.images.map((cell) => ({ id: cell.id, file: cell.path, ...(marks[cell.id] || {}) })),
    })),
    picked: ids((m) => m.status === "picked"),
    rejected: ids((m) => m.status === "rejected"),
    starred: ids((m) => m.starred),
    open: viewer.open,
    selected: viewer.selected,
    problems,
    provider: viewer.provider,
  };
}

/** The images whose file the page could not draw, in one sentence (or null). */
export function unreadable(viewer) {
  const ids = [...viewer.unreadable].sort();
  return ids.length ? `images/ files that cannot be drawn (not a PNG, JPEG or WebP, or outside the workspace): ${ids.join(", ")}` : null;
}

/** Every marked image with its mark, row and prompt. */
export function getChoices(viewer) {
  const view = viewer.view;
  const rowOf = new Map();
  for (const row of view.rows) for (const cell of row.images) rowOf.set(cell.id, row.unlisted ? null : row.id);
  const choices = {};
  for (const [id, mark] of Object.entries(viewer.marks())) {
    if (isBlank(mark)) continue;
    choices[id] = { ...mark, row: rowOf.get(id) ?? null, prompt: promptOf(view, id), onBoard: rowOf.has(id) };
  }
  return { choices, file: "choices.json" };
}
