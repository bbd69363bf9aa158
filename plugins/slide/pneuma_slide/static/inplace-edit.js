// The SlideViewer's "Edit in place" (docs/viewer-contract.md, "Edit in
// place"): a double-click on a slide's text (an element that holds only
// text) makes it editable where it stands; Enter or leaving it saves, Esc
// puts the text back. The new file differs from the old one only in that
// text node's bytes (source-edit.js maps the rendered node back to them),
// and goes through ctx.editFile, which refuses it with E_CONFLICT (and the
// shell shows both versions) when the agent wrote the file meanwhile.
// Mixed into the viewer's prototype.

import {
  htmlTextNodes,
  renderedTextNodeIndex as textNodeIndex,
  replaceHtmlText,
  soleTextNode,
} from "/static/lib/source-edit.js";

function collapse(text) {
  return String(text).replace(/\s+/g, " ").trim();
}

export const editingInPlace = {
  /** A double-click on the slide on screen: edit the text under the pointer if it is plain text. */
  onSlideDoubleClick(e, doc) {
    if (this.editing || this.presenting) return;
    const el = e.target && e.target.nodeType === 1 ? e.target : null;
    const slide = this.currentSlide;
    if (!el || !slide || slide.missing) return;
    e.preventDefault();
    const node = soleTextNode(el);
    const index = node ? textNodeIndex(doc, node) : -1;
    if (index < 0) {
      this.flash(this.t("edit.refused"), "error", 5000);
      return;
    }
    this.beginEdit({ el, doc, node, index, file: slide.file, base: this.files.get(slide.file).content });
  },

  beginEdit(edit) {
    const { el } = edit;
    edit.before = edit.node.nodeValue;
    this.editing = edit;
    el.setAttribute("data-pneuma-editing", "");
    // The shell's follow waits while this is set (docs/viewer-contract.md, "Follow the agent").
    this.stageFrame.iframe.setAttribute("data-pneuma-busy", "");
    el.setAttribute("contenteditable", "plaintext-only");
    el.setAttribute("spellcheck", "true");
    edit.onKey = (e) => this.onEditKey(e);
    edit.onBlur = () => this.finishEdit(true);
    el.addEventListener("keydown", edit.onKey);
    el.addEventListener("blur", edit.onBlur);
    el.focus();
    // Everything selected: typing replaces the text, an arrow key keeps it.
    const range = edit.doc.createRange();
    range.selectNodeContents(el);
    const selection = edit.doc.getSelection();
    selection.removeAllRanges();
    selection.addRange(range);
  },

  onEditKey(e) {
    if (e.key === "Enter" && !e.shiftKey && !e.isComposing) {
      e.preventDefault();
      this.finishEdit(true);
    } else if (e.key === "Escape") {
      e.preventDefault();
      this.finishEdit(false);
    }
    e.stopPropagation();
  },

  /** Leave the edit: save it (`keep`) or put the old text back; then show the slide as its file has it. */
  async finishEdit(keep) {
    const edit = this.editing;
    if (!edit) return;
    this.editing = null;
    const { el } = edit;
    el.removeEventListener("keydown", edit.onKey);
    el.removeEventListener("blur", edit.onBlur);
    el.removeAttribute("contenteditable");
    el.removeAttribute("spellcheck");
    el.removeAttribute("data-pneuma-editing");
    this.stageFrame.iframe.removeAttribute("data-pneuma-busy");
    const words = collapse(el.textContent);
    const changed = keep && words && words !== collapse(edit.before);
    if (!changed) {
      el.textContent = edit.before;
      this.renderStage();
      return;
    }
    let answer;
    try {
      answer = await this.saveEdit(edit, words);
    } catch (error) {
      answer = { ok: false, code: error && error.code, message: (error && error.message) || String(error) };
    }
    if (!answer || answer.ok === false) {
      // E_CONFLICT: the shell's dialog showed both versions and kept the person's text.
      if (answer && answer.code === "E_REFUSED") this.flash(answer.message, "error", 6000);
      else if (answer && answer.code !== "E_CONFLICT") {
        this.flash(this.t("edit.failed", { message: answer.message }), "error", 6000);
      }
      el.textContent = edit.before;
    }
    this.renderStage();
    // The body now shows the saved text, not the fragment painted last: the
    // next paint writes the body even if its fragment is that one (an undo
    // whose file change came together with the save's).
    if (answer && answer.ok !== false && this.stageFrame.shown) this.stageFrame.shown.edited = true;
  },

  /**
   * Ctrl-Z / Ctrl-Y pressed in the slide's frame: keys there never reach
   * the shell, whose undo of hand edits listens on the page, so pass them on.
   */
  forwardUndoKey(e) {
    if (this.editing || !(e.ctrlKey || e.metaKey) || e.altKey) return;
    const key = e.key.toLowerCase();
    if (key !== "z" && key !== "y") return;
    e.preventDefault();
    document.dispatchEvent(new KeyboardEvent("keydown", {
      key: e.key, code: e.code, ctrlKey: e.ctrlKey, metaKey: e.metaKey, shiftKey: e.shiftKey,
      bubbles: true, cancelable: true,
    }));
  },

  /** Write the file with only the edited text node's bytes changed; ctx.editFile's answer. */
  async saveEdit(edit, words) {
    const nodes = htmlTextNodes(edit.base);
    const source = nodes[edit.index];
    if (!source || collapse(source.text) !== collapse(edit.before)) {
      // The rendered text and the source disagree (markup the parser
      // rearranged): refuse rather than change the wrong bytes.
      return { ok: false, code: "E_REFUSED", message: this.t("edit.refused") };
    }
    // replaceHtmlText keeps the whitespace around the words as the source has it.
    const content = replaceHtmlText(edit.base, edit.index, words);
    if (typeof this.ctx.editFile === "function") return this.ctx.editFile(edit.file, content, { base: edit.base });
    await this.ctx.writeFile(edit.file, content); // a shell older than "edit"
    return { ok: true };
  },
};
