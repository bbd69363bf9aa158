// Edit in place in the doc viewer (docs/viewer-contract.md, "Edit in place";
// docs/doc.md, "Editing in place"). Double-click a heading, a paragraph or a
// list item: its Markdown source text (inline markup included, so nothing of
// it is lost) becomes editable where it stands; Enter or leaving it saves,
// Shift+Enter starts a new line in a paragraph, Esc cancels. The file is
// written with ctx.editFile over the text the edit started from; every byte
// outside the block's inline text stays as it was (markdownInlineRange over
// markdown-it's token.map). Mixed into the DocViewer's prototype.

import { markdownInlineRange } from "/static/lib/source-edit.js";

const EDITABLE = "h1,h2,h3,h4,h5,h6,p,li";
// Children of a list item that are blocks of their own, not its text.
const BLOCK_CHILD = /^(UL|OL|P|PRE|BLOCKQUOTE|DIV|TABLE|H[1-6]|HR)$/;
const REFUSED_MS = 1600;

/**
 * The editable blocks of a Markdown source in document order, as the
 * renderer draws them: `[{tag, map}]` where `tag` is "h", "p" or "li" and
 * `map` the source lines [start, end) of the block's text (null when a list
 * item starts with no paragraph). The rendered page's h1-h6, p and li
 * elements come in the same order (raw HTML is shown as text, never as
 * elements), so the n-th element is the n-th block.
 */
export function editableBlocks(md, source) {
  const tokens = md.parse(source, {});
  const blocks = [];
  for (let i = 0; i < tokens.length; i++) {
    const token = tokens[i];
    if (token.type === "heading_open") blocks.push({ tag: "h", map: token.map });
    else if (token.type === "paragraph_open" && !token.hidden) blocks.push({ tag: "p", map: token.map });
    else if (token.type === "list_item_open") {
      const first = tokens[i + 1];
      blocks.push({ tag: "li", map: first && first.type === "paragraph_open" ? first.map : null });
    }
  }
  return blocks;
}

function tagKind(el) {
  return /^H[1-6]$/.test(el.tagName) ? "h" : el.tagName.toLowerCase();
}

export const editingInPlace = {
  installEditing() {
    this.editing = null;
    this.article.addEventListener("dblclick", (e) => {
      const el = e.target.closest(EDITABLE);
      if (!el || !this.article.contains(el) || this.editing || e.target.closest("a, input")) return;
      e.preventDefault();
      this.startEdit(el);
    });
  },

  /** Where `el`'s text is in the open file's source: {path, source, range} or null. */
  sourceOf(el) {
    const path = this.active;
    const source = path ? this.files.get(path)?.content : null;
    if (typeof source !== "string" || !this.md) return null;
    const elements = [...this.article.querySelectorAll(EDITABLE)];
    const blocks = editableBlocks(this.md, source);
    const index = elements.indexOf(el);
    const block = blocks[index];
    if (elements.length !== blocks.length || !block || block.tag !== tagKind(el) || !block.map) return null;
    const range = markdownInlineRange(source, block.map[0], block.map[1]);
    return range ? { path, source, range, lines: block.map } : null;
  },

  refuseEdit(el) {
    el.classList.add("pd-edit-refused");
    el.title = this.t("edit.refused");
    setTimeout(() => el.classList.remove("pd-edit-refused"), REFUSED_MS);
  },

  startEdit(el) {
    if (typeof this.ctx.editFile !== "function") return false;
    const place = this.sourceOf(el);
    if (!place) {
      this.refuseEdit(el);
      return false;
    }
    // A list item's own text: its children up to its first nested block.
    const children = [...el.childNodes];
    const firstBlock = el.tagName === "LI" ? children.findIndex((n) => n.nodeType === 1 && BLOCK_CHILD.test(n.tagName)) : -1;
    const own = firstBlock < 0 ? children : children.slice(0, firstBlock);
    const editor = document.createElement("span");
    editor.className = "pd-editing";
    editor.setAttribute("contenteditable", "plaintext-only");
    editor.setAttribute("role", "textbox");
    editor.setAttribute("aria-label", this.t("edit.label"));
    editor.spellcheck = true;
    editor.textContent = place.range.text;
    el.insertBefore(editor, own.length ? own[0] : el.firstChild);
    for (const node of own) node.remove();
    el.setAttribute("data-pneuma-busy", "edit");
    this.editing = { el, editor, own, place, kind: tagKind(el), deferred: false, done: false };
    editor.addEventListener("keydown", (e) => this.editKeys(e));
    editor.addEventListener("blur", () => this.commitEdit());
    editor.focus();
    const selection = document.getSelection();
    selection?.selectAllChildren(editor);
    selection?.collapseToEnd();
    return true;
  },

  editKeys(e) {
    if (e.key === "Escape") {
      e.preventDefault();
      e.stopPropagation(); // not the shell's Esc (stop the agent, leave annotating)
      this.cancelEdit();
    } else if (e.key === "Enter" && !(e.shiftKey && this.editing?.kind !== "h")) {
      e.preventDefault();
      this.commitEdit();
    }
  },

  // Put the block back as it was rendered, and show what changed meanwhile.
  endEdit() {
    const editing = this.editing;
    if (!editing) return;
    editing.done = true;
    const { el, editor, own } = editing;
    for (const node of own) el.insertBefore(node, editor);
    editor.remove();
    el.removeAttribute("data-pneuma-busy");
    this.editing = null;
    if (this.active === editing.place.path || editing.deferred) this.rerender();
  },

  cancelEdit() {
    if (this.editing && !this.editing.saving) this.endEdit();
  },

  async commitEdit() {
    const editing = this.editing;
    if (!editing || editing.saving || editing.done) return;
    let text = editing.editor.innerText.replace(/\r\n?/g, "\n").replace(/\n$/, "");
    if (editing.kind === "h") text = text.replace(/\s*\n\s*/g, " ");
    const { path, source, range } = editing.place;
    if (text === range.text) {
      this.endEdit();
      return;
    }
    editing.saving = true;
    const edited = source.slice(0, range.start) + text + source.slice(range.end);
    let result;
    try {
      result = await this.ctx.editFile(path, edited, { base: source });
    } catch (error) {
      result = { ok: false, message: String(error) };
    }
    if (result && result.ok) {
      // Shown at once; the watcher's report of this very write changes nothing more.
      const file = this.files.get(path);
      // (After "Use mine" on a merge, the file holds the agent's change too.)
      if (file) this.files.set(path, { ...file, content: typeof result.written === "string" ? result.written : edited });
    }
    this.endEdit();
  },
};
