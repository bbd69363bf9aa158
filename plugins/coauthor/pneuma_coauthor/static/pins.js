// The CoAuthor viewer's part in annotating and following the agent
// (docs/viewer-contract.md, "Annotate, edit in place, follow the agent"):
// a pin is a run of source lines of a paper file (a double-click on a line
// selects its paragraph: the lines between blank lines), shown as a
// numbered marker at its first line; its place is the source text of those
// lines; revealing a pin or a file opens it there. Methods of CoAuthorViewer
// (viewer.js), mixed in like panels.js.

import { paperFiles } from "./text.js";

const FLASH_MS = 1600;

/** The lines [first, last] (1-based) of the paragraph around `line`: the
 * run of non-blank lines that holds it. */
export function paragraphAt(lines, line) {
  const blank = (n) => !String(lines[n - 1] ?? "").trim();
  if (blank(line)) return [line, line];
  let first = line;
  let last = line;
  while (first > 1 && !blank(first - 1)) first -= 1;
  while (last < lines.length && !blank(last + 1)) last += 1;
  return [first, last];
}

function fileText(files, path) {
  const file = (files || []).find((f) => f.path === path);
  return file && typeof file.content === "string" ? file.content : null;
}

export const pins = {
  /** Markers for the pins on the file on show ([] removes them). */
  showPins(list) {
    this.pins = Array.isArray(list) ? list : [];
    this.paintPins();
  },

  paintPins() {
    for (const el of this.body.querySelectorAll(".ca-pin")) el.remove();
    for (const el of this.body.querySelectorAll(".ca-pinned")) el.classList.remove("ca-pinned");
    const s = this.state;
    if (s.view !== "file") return;
    const rendered = /\.md$/i.test(s.file || "") && !s.source;
    const flash = this.flashing;
    if (flash && flash.file === s.file && Date.now() < flash.until && !rendered) {
      for (let n = flash.lines[0]; n <= flash.lines[1]; n += 1) this.body.querySelector(`.ca-line[data-line="${n}"]`)?.classList.add("ca-flash");
    }
    for (const pin of this.pins || []) {
      const sel = pin.selection || {};
      if (sel.file !== s.file || !Array.isArray(sel.lines)) continue;
      const [a, b] = sel.lines.map(Number);
      const first = rendered ? this.mdBlockAt(a) : this.body.querySelector(`.ca-line[data-line="${a}"]`);
      if (!first) continue;
      const number = String(Number(pin.number) || 0);
      const marker = document.createElement("span");
      marker.className = "ca-pin";
      marker.dataset.pin = number;
      marker.dataset.status = String(pin.status || "open");
      marker.textContent = number;
      first.prepend(marker);
      if (rendered) continue;
      for (let n = a; n <= b; n += 1) this.body.querySelector(`.ca-line[data-line="${n}"]`)?.classList.add("ca-pinned");
    }
  },

  /** The pinned lines' source text now (what "addressed" compares). */
  pinPlace(selection, files) {
    if (!selection || !selection.file || !Array.isArray(selection.lines)) return selection ? String(selection.text || "") : "";
    const text = fileText(files || this.ctx.files, selection.file);
    if (text === null) return "";
    const [a, b] = selection.lines;
    return text.split("\n").slice(a - 1, b).join("\n");
  },

  /** The person clicked a pin in the review list: its lines, flashed. */
  async revealPin(pin) {
    const sel = pin && pin.selection;
    if (!sel) return false;
    if (sel.file && Array.isArray(sel.lines)) {
      if (!paperFiles(this.ctx.files).some((f) => f.path === sel.file)) return false;
      // Kept while it lasts, so that a redraw meanwhile (a file event) flashes it too.
      this.flashing = { file: sel.file, lines: sel.lines, until: Date.now() + FLASH_MS };
      this.showFile(sel.file, sel.lines[0]);
      setTimeout(() => {
        for (const row of this.body.querySelectorAll(".ca-code .ca-flash")) row.classList.remove("ca-flash");
      }, FLASH_MS);
      return true;
    }
    if (sel.taskId) {
      await this.showTask(sel.taskId, sel.patchId || null);
      return true;
    }
    return false;
  },

  /** Bring a paper file to the front (where the reader was, if it is on show). */
  async reveal(path) {
    if (!paperFiles(this.ctx.files).some((f) => f.path === path)) return false;
    if (this.state.view !== "file" || this.state.file !== path) this.showFile(path);
    return true;
  },

  /** A double-click on a line's text in a source file selects its paragraph. */
  selectParagraph(event) {
    const row = event.target.closest && event.target.closest(".ca-code .ca-line");
    // The gutter selects lines (its clicks did already): not a paragraph on top.
    if (!row || event.target.closest(".ca-ln") || this.state.view !== "file") return;
    const text = fileText(this.ctx.files, this.state.file);
    if (text === null) return;
    const [a, b] = paragraphAt(text.split("\n"), Number(row.dataset.line));
    window.getSelection()?.removeAllRanges();
    this.state.anchorLine = a;
    this.setLines(this.state.file, a, b);
  },
};
