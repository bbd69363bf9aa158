// The doc viewer's part in annotating and following the agent
// (docs/viewer-contract.md, "Annotate" and "Follow the agent"): numbered
// markers at the pinned text of the document on screen, a pin's place as the
// source line holding its text (so the shell can tell when the agent changed
// it), going to a pin, and bringing a document to the front. A pin is made
// by selecting text while the shell's Annotate switch is on. Mixed into the
// DocViewer's prototype.

const FLASH_MS = 1800;
const FIND_CHARS = 60; // how much of a pin's text is looked for

/** The first line of a selected text, trimmed to what a search can find. */
function needle(text) {
  const first = String(text || "").replace(/\u00a0/g, " ").split("\n").find((line) => line.trim()) || "";
  return first.trim().slice(0, FIND_CHARS);
}

/** A Range over the first occurrence of `wanted` in the text under `root`,
 *  whitespace runs counting as one space (a source line break is a space on
 *  the page), or null. */
export function findTextRange(root, wanted) {
  const target = String(wanted || "").replace(/\s+/g, " ").trim();
  if (!target) return null;
  const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
  let text = "";
  const where = []; // for each character of `text`: [node, offset]
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    for (let i = 0; i < node.data.length; i++) {
      const blank = /\s/.test(node.data[i]);
      if (blank && text.endsWith(" ")) continue;
      text += blank ? " " : node.data[i];
      where.push([node, i]);
    }
  }
  const found = text.indexOf(target);
  if (found < 0) return null;
  const [endNode, endOffset] = where[found + target.length - 1];
  const range = document.createRange();
  range.setStart(...where[found]);
  range.setEnd(endNode, endOffset + 1);
  return range;
}

function pinFile(pin) {
  return pin && pin.selection && pin.selection.file ? String(pin.selection.file) : "";
}

export const docPins = {
  /** The shell's pins changed: remember them and draw those of the open file. */
  showPins(pins) {
    this.pins = Array.isArray(pins) ? pins.filter((p) => p && p.selection) : [];
    this.drawPins();
  },

  drawPins() {
    if (this.destroyed || !this.article) return;
    if (!this.pinLayer) {
      this.pinLayer = document.createElement("div");
      this.pinLayer.className = "pd-pin-layer";
      this.pinLayer.setAttribute("aria-hidden", "true");
      this.scroller.append(this.pinLayer);
    }
    const box = this.scroller.getBoundingClientRect();
    const markers = [];
    for (const pin of this.pins || []) {
      if (pinFile(pin) !== this.active) continue;
      const range = findTextRange(this.article, needle(pin.selection.text || pin.selection.section));
      const rect = range && range.getClientRects()[0];
      if (!rect) continue;
      const marker = document.createElement("span");
      marker.className = `pd-pin-marker is-${pin.status || "open"}`;
      marker.dataset.pin = String(pin.id);
      marker.title = pin.comment || "";
      marker.textContent = String(pin.number ?? "");
      marker.style.top = `${Math.round(rect.top - box.top + this.scroller.scrollTop - 10)}px`;
      marker.style.left = `${Math.round(Math.max(rect.left - box.left + this.scroller.scrollLeft - 22, 2))}px`;
      markers.push(marker);
    }
    this.pinLayer.replaceChildren(...markers);
  },

  /** No second renderer to draw a crop with: the pin goes without a picture. */
  async capturePin() {
    return null;
  },

  /** The source line that holds the pin's text now ("" once it is gone). */
  pinPlace(selection, files) {
    const file = (files || []).find((f) => f.path === selection?.file);
    const source = file && typeof file.content === "string" ? file.content : "";
    const wanted = needle(selection?.text || "");
    if (!wanted) return source;
    // Compared without inline markup: "**bold** text" was selected as "bold text".
    const plain = (text) => text.replace(/\]\([^)]*\)/g, "").replace(/[*_`~[\]<>#]/g, "").replace(/\s+/g, " ");
    const words = plain(wanted).trim().split(" ").slice(0, 6).join(" ");
    const line = source.split("\n").find((l) => plain(l).includes(words));
    return line === undefined ? "" : line;
  },

  /** Show the pinned text: its document, scrolled to it, flashed. */
  revealPin(pin) {
    const file = pinFile(pin);
    if (file && file !== this.active && this.tabs.includes(file)) this.open(file);
    const range = findTextRange(this.article, needle(pin.selection.text || pin.selection.section));
    if (!range) {
      if (pin.selection.slug) this.scrollToSlug(pin.selection.slug, { flash: true });
      return;
    }
    const target = range.startContainer.parentElement.closest("h1,h2,h3,h4,h5,h6,p,li,pre,blockquote,td") || range.startContainer.parentElement;
    const top = target.getBoundingClientRect().top - this.scroller.getBoundingClientRect().top;
    this.scroller.scrollTop += top - 48;
    target.classList.remove("pd-flash");
    void target.offsetWidth;
    target.classList.add("pd-flash");
    setTimeout(() => target.classList.remove("pd-flash"), FLASH_MS);
    this.drawPins();
  },

  /** Follow the agent: bring the document `path` to the front. */
  async reveal(path) {
    await this.ready;
    if (!this.tabs.includes(path)) return false;
    if (path !== this.active) this.open(path);
    return true;
  },

  /** Markdown always renders: no document is broken. */
  problems() {
    return {};
  },
};
