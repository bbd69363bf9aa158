// Editing a page's text where it stands (docs/viewer-contract.md, "Edit in
// place"). The bridge makes the double-clicked element editable inside the
// page and reports the runs of text that changed; here they are found in
// the page's source (page-text.js) and written back through the shell
// (ctx.editFile: refused with E_CONFLICT when the file changed meanwhile),
// changing only those bytes. Text the page's scripts made is not in the
// source: such an edit is refused with a notice and the page's text put
// back, never written somewhere else. Methods of WebcraftViewer, mixed in.

import { replaceTexts } from "./page-text.js";

const MAX_TEXT = 100_000;
const NOTICE_MS = 8000;

/** A change as the bridge reported it, if it has the shape of one (the
 * frame is untrusted: anything else is dropped). */
function validChange(change) {
  return !!change && typeof change.before === "string" && typeof change.after === "string"
    && change.before.length <= MAX_TEXT && change.after.length <= MAX_TEXT
    && Number.isInteger(change.index) && Number.isInteger(change.total)
    && change.index >= 0 && change.index < change.total;
}

export const editInPlace = {
  /** The person started editing in `frame`: the page's source as it is now
   * is the edit's base, so that a write by the agent meanwhile makes the
   * save a conflict (both versions shown) instead of going unnoticed. */
  editStarted(frame) {
    const page = frame.shownPage || this.page;
    const file = this.files.find((f) => f.path === page);
    this.editBase = file && typeof file.content === "string" ? { page, content: file.content } : null;
    // A reload already loading underneath would take the document away
    // mid-edit: it is loaded again once the edit is over (editDone).
    if (frame.dropIncoming()) this.reloadAfterEdit = true;
    this.setEditing(true);
    this.say(null);
  },

  /** While an edit is under way the shell does not move the viewer to
   * follow the agent: the focus is inside the frame, out of its sight, so
   * the viewer says so with `data-pneuma-busy` (docs/viewer-contract.md). */
  setEditing(on) {
    this.editing = on;
    this.noticeBar.parentElement?.toggleAttribute("data-pneuma-busy", on);
  },

  /** The bridge's "edit": the person committed (or cancelled) an edit in `frame`. */
  async editDone(frame, message) {
    this.setEditing(false);
    const base = this.editBase;
    this.editBase = null;
    try {
      await this.saveEdit(frame, message, base);
    } finally {
      // A change the agent made meanwhile is shown now (not under the person's caret).
      if (this.reloadAfterEdit) {
        this.reloadAfterEdit = false;
        this.render({ keepScroll: true });
      }
    }
  },

  async saveEdit(frame, message, base) {
    if (message.refused === "markup") return this.refuseEdit(frame, this.t("edit.refusedMarkup"), false);
    if (message.refused) return this.refuseEdit(frame, this.t("edit.refusedScript"), false);
    const changes = Array.isArray(message.changes) ? message.changes.filter(validChange) : [];
    if (!changes.length) return undefined;
    const page = frame.shownPage || this.page;
    const file = this.files.find((f) => f.path === page);
    const source = base && base.page === page ? base.content : file && file.content;
    if (typeof source !== "string") return this.refuseEdit(frame, this.t("edit.refusedScript"));
    const result = replaceTexts(source, changes);
    if (result.refused) return this.refuseEdit(frame, this.t("edit.refusedScript"));
    if (result.content === source) return undefined;
    let answer;
    try {
      answer = this.ctx.editFile
        ? await this.ctx.editFile(page, result.content, { base: source })
        : await this.ctx.writeFile(page, result.content);
    } catch (error) {
      answer = { ok: false, code: error && error.code, message: String(error && error.message || error) };
    }
    if (answer && answer.ok === false) {
      frame.post({ type: "revert-edit" });
      // The conflict itself is the shell's to show (both versions, in its dialog).
      if (answer.code === "E_CONFLICT") this.say("warn", this.t("edit.conflict", { page }));
      else this.say("bad", this.t("edit.failed", { page, message: answer.message || answer.code || "" }));
    }
    return undefined;
  },

  /** Ctrl-Z / Ctrl-Shift-Z / Ctrl-Y pressed in the page (not in a text
   * field of it): keys inside a frame never reach the shell, so the viewer
   * hands it the same key, and the shell undoes or redoes the last hand edit. */
  forwardKey(message) {
    const key = message.key === "z" || message.key === "y" ? message.key : null;
    if (!key || this.editing) return;
    this.element.dispatchEvent(new KeyboardEvent("keydown", {
      key, ctrlKey: true, shiftKey: message.shift === true, bubbles: true, cancelable: true,
    }));
  },

  refuseEdit(frame, text, revert = true) {
    if (revert) frame.post({ type: "revert-edit" });
    this.say("warn", text);
  },

  /** A one-line notice above the stage (null hides it). */
  say(kind, text) {
    clearTimeout(this.noticeTimer);
    this.noticeBar.hidden = !text;
    this.noticeBar.dataset.kind = kind || "";
    this.noticeBar.textContent = text || "";
    if (text) this.noticeTimer = setTimeout(() => this.say(null), NOTICE_MS);
  },
};
