// The board's title and each row's title edited in place (viewer contract,
// "Edit in place"): a double click turns the heading into a text field;
// Enter or leaving it saves into board.json through ctx.editFile, Esc
// cancels. Only the title's own string changes in the file when it can be
// found once as written; otherwise the file is written again from its parsed
// data with the new title (the same data, two-space indentation).

import { BOARD_FILE } from "./board.js";

function titleKey(oldTitle) {
  return new RegExp(`("title"\\s*:\\s*)${JSON.stringify(oldTitle).replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}`, "g");
}

function setTitle(data, rowId, title) {
  if (rowId === null) {
    data.title = title;
    return true;
  }
  const row = Array.isArray(data.rows) ? data.rows.find((r) => r && r.id === rowId) : null;
  if (!row) return false;
  row.title = title;
  return true;
}

/** board.json's text with one title changed (`rowId` null: the board's), or
 * null when the text does not parse or has no such row. */
export function replaceTitle(text, rowId, newTitle) {
  let data;
  try {
    data = JSON.parse(text);
  } catch {
    return null;
  }
  const wanted = JSON.parse(JSON.stringify(data));
  if (!setTitle(wanted, rowId, newTitle)) return null;
  const oldTitle = rowId === null ? data.title : data.rows.find((r) => r && r.id === rowId).title;
  if (typeof oldTitle === "string") {
    const matches = [...text.matchAll(titleKey(oldTitle))];
    if (matches.length === 1) {
      const m = matches[0];
      const next = text.slice(0, m.index) + m[1] + JSON.stringify(newTitle) + text.slice(m.index + m[0].length);
      try {
        if (JSON.stringify(JSON.parse(next)) === JSON.stringify(wanted)) return next;
      } catch {
        // not the title we meant (inside another string): write the data instead
      }
    }
  }
  return JSON.stringify(wanted, null, 2) + "\n";
}

/** The viewer's methods for editing titles (`this` is the viewer). */
export const titleMethods = {
  /** Turn `heading` into a field for the title of `rowId` (null: the board). */
  editTitle(heading, rowId, title) {
    if (this.readOnly || this.editing) return;
    this.editing = true;
    const input = document.createElement("input");
    input.className = "il-title-input";
    input.value = title;
    input.setAttribute("aria-label", this.t("edit.title"));
    heading.dataset.pneumaBusy = "";
    heading.replaceChildren(input);
    input.focus();
    input.select();
    let done = false;
    const finish = async (save) => {
      if (done) return;
      done = true;
      const value = input.value.trim();
      if (save && value && value !== title) await this.saveTitle(rowId, value);
      this.editing = false;
      this.render();
    };
    input.addEventListener("keydown", (event) => {
      if (event.key === "Enter") {
        event.preventDefault();
        finish(true);
      } else if (event.key === "Escape") {
        event.preventDefault(); // Esc here cancels the edit; it does not interrupt the agent
        finish(false);
      }
    });
    input.addEventListener("blur", () => finish(true));
  },

  async saveTitle(rowId, value) {
    const file = this.files.find((f) => f.path === BOARD_FILE);
    const base = file && typeof file.content === "string" ? file.content : null;
    const next = base === null ? null : replaceTitle(base, rowId, value);
    if (next === null) {
      this.notice = this.t("edit.unreadable");
      return;
    }
    const answer = await this.ctx.editFile(BOARD_FILE, next, { base });
    this.notice = answer && answer.ok ? "" : this.t("edit.failed", { message: answer?.message || "" });
  },
};
