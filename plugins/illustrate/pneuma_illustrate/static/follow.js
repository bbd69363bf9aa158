// Following the agent (viewer contract, "Follow the agent"): the shell hands
// the viewer a file the agent's turn changed; the viewer scrolls to the
// image that file is (the picture or its record) or to the newest row for
// board.json, and names what it cannot show. `followMethods` are the
// viewer's methods (viewer.js assigns them to its prototype).

import { BOARD_FILE, CHOICES_FILE, findImage } from "./board.js";
import { unreadable } from "./report.js";

const IMAGE_FILE = /^images\/([^/]+)\.(?:png|jpe?g|webp|json)$/i;
const FLASH_MS = 1600;

export const followMethods = {
  async reveal(path) {
    const m = IMAGE_FILE.exec(path || "");
    let target = null;
    if (m && findImage(this.view, m[1])) {
      target = this.main?.querySelector(`.il-card[data-image-id="${CSS.escape(m[1])}"]`);
    } else if (path === BOARD_FILE || path === CHOICES_FILE) {
      const rows = this.main?.querySelectorAll(".il-row") || [];
      target = rows.length ? rows[rows.length - 1] : this.main;
    }
    if (!target) return false;
    target.scrollIntoView({ block: "nearest" });
    target.classList.add("il-flash");
    setTimeout(() => target.classList.remove("il-flash"), FLASH_MS);
    return true;
  },

  /** What the viewer cannot show as it should, by file (English: the shell
   * names it in a notice, the agent may read it). */
  problems() {
    const found = {};
    if (this.view.error) found[BOARD_FILE] = this.view.error;
    const missing = this.view.rows.flatMap((row) => row.images.filter((c) => !c.path).map((c) => c.id));
    if (missing.length) found[BOARD_FILE] = `board.json lists images with no file in images/: ${missing.join(", ")}`;
    const board = [found[BOARD_FILE], ...this.view.warnings, unreadable(this)].filter(Boolean);
    if (board.length) found[BOARD_FILE] = board.join("; ");
    for (const [id, record] of this.view.records) {
      if (record.broken) found[`images/${id}.json`] = `the record of ${id} is not valid JSON`;
    }
    return found;
  },
};
