// The PrintViewer's "Edit in place" (docs/viewer-contract.md, "Edit in
// place"): a double-click on an element that holds only text makes it
// editable where it stands; Enter or leaving it saves, Esc puts the text
// back. The file then differs from before only in that text node's bytes
// (source-edit.js maps the drawn node back to them), written through
// ctx.editFile, which refuses with E_CONFLICT (the shell shows both
// versions) when the agent wrote the file meanwhile. Mixed into the
// viewer's prototype.

import {
  htmlTextNodes,
  renderedTextNodeIndex as textNodeIndex,
  replaceHtmlText,
  soleTextNode,
} from "/static/lib/source-edit.js";

const collapse = (text) => String(text).replace(/\s+/g, " ").trim();

export const editingInPlace = {
  onFrameDoubleClick(e, sheet, doc) {
    if (this.editing || this.readOnly || sheet.missing) return;
    const el = e.target && e.target.nodeType === 1 ? e.target : null;
    if (!el) return;
    e.preventDefault();
    const node = soleTextNode(el);
    const index = node ? textNodeIndex(doc, node) : -1;
    const base = this.fragmentOf(sheet.page.file);
    if (index < 0 || base === null) {
      this.flashBanner(this.t("edit.refused"));
      return;
    }
    this.beginEdit({ el, doc, sheet, index, file: sheet.page.file, base, before: node.nodeValue });
  },

  beginEdit(edit) {
    const { el } = edit;
    this.editing = edit;
    edit.sheet.editing = true;
    el.setAttribute("data-pneuma-editing", "");
    edit.sheet.iframe.setAttribute("data-pneuma-busy", "");
    el.setAttribute("contenteditable", "plaintext-only");
    edit.onKey = (e) => {
      if (e.key === "Enter" && !e.shiftKey && !e.isComposing) {
        e.preventDefault();
        this.finishEdit(true);
      } else if (e.key === "Escape") {
        e.preventDefault();
        this.finishEdit(false);
      }
      e.stopPropagation();
    };
    edit.onBlur = () => this.finishEdit(true);
    el.addEventListener("keydown", edit.onKey);
    el.addEventListener("blur", edit.onBlur);
    el.focus();
    const range = edit.doc.createRange();
    range.selectNodeContents(el);
    const selection = edit.doc.getSelection();
    selection.removeAllRanges();
    selection.addRange(range);
  },

  async finishEdit(keep) {
    const edit = this.editing;
    if (!edit) return;
    this.editing = null;
    const { el, sheet } = edit;
    el.removeEventListener("keydown", edit.onKey);
    el.removeEventListener("blur", edit.onBlur);
    el.removeAttribute("contenteditable");
    el.removeAttribute("data-pneuma-editing");
    sheet.iframe.removeAttribute("data-pneuma-busy");
    const words = collapse(el.textContent);
    let answer = { ok: true };
    if (keep && words && words !== collapse(edit.before)) {
      try {
        answer = await this.saveEdit(edit, words);
      } catch (error) {
        answer = { ok: false, code: error && error.code, message: (error && error.message) || String(error) };
      }
      if (!answer || answer.ok === false) {
        if (answer && answer.code === "E_REFUSED") this.flashBanner(answer.message);
        else if (answer && answer.code !== "E_CONFLICT") this.flashBanner(this.t("edit.failed", { message: answer.message }));
        el.textContent = edit.before;
      }
    } else {
      el.textContent = edit.before;
    }
    sheet.editing = false;
    sheet.edited = true; // the body shows typed text: the next paint rewrites it
    if (sheet.pending) {
      const pending = sheet.pending;
      sheet.pending = null;
      sheet.paint(...pending);
    } else {
      sheet.measure();
      this.renderChrome();
    }
  },

  /** The file with only the edited text node's bytes changed, through ctx.editFile. */
  async saveEdit(edit, words) {
    const source = htmlTextNodes(edit.base)[edit.index];
    if (!source || collapse(source.text) !== collapse(edit.before)) {
      // The drawn text and the source disagree (markup the parser
      // rearranged): refuse rather than change the wrong bytes.
      return { ok: false, code: "E_REFUSED", message: this.t("edit.refused") };
    }
    const content = replaceHtmlText(edit.base, edit.index, words);
    if (typeof this.ctx.editFile === "function") return this.ctx.editFile(edit.file, content, { base: edit.base });
    await this.ctx.writeFile(edit.file, content);
    return { ok: true };
  },

  /** Ctrl-Z / Ctrl-Y in a page's frame: pass them to the shell's undo of hand edits. */
  forwardUndoKey(e) {
    if (this.editing || !(e.ctrlKey || e.metaKey) || e.altKey) return;
    const key = e.key.toLowerCase();
    if (key !== "z" && key !== "y") return;
    e.preventDefault();
    document.dispatchEvent(new KeyboardEvent("keydown", {
      key: e.key, code: e.code, ctrlKey: e.ctrlKey, metaKey: e.metaKey, shiftKey: e.shiftKey, bubbles: true, cancelable: true,
    }));
  },

  flashBanner(text) {
    this.banner.hidden = false;
    this.banner.textContent = text;
    clearTimeout(this.bannerTimer);
    this.bannerTimer = setTimeout(() => this.renderChrome(), 6000);
  },
};
