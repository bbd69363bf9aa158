// The SlideViewer's methods for the deck's order: dragging a slide in the
// navigator or the grid, moving it by keyboard, adding a file to the deck
// (each one a write of the manifest); mixed into its prototype.

import { autoScroll, dropIndex, placeIndicator } from "./controls.js";
import {
  MANIFEST, appendToManifest, formatManifest, parseManifest, reorderManifest,
} from "./slide-doc.js";
import { fetchJson, h } from "/static/lib/viewer-helpers.js";

export const deckOrder = {
  setupDrag() {
    const start = (container, itemSelector) => (e) => {
      if (e.button !== 0) return;
      const item = e.target.closest(itemSelector);
      if (!item || !container.contains(item)) return;
      const from = Number(item.dataset.index);
      const x0 = e.clientX;
      const y0 = e.clientY;
      let dragging = false;
      let to = from;
      const indicator = h("div", { class: "pns-drop" });
      const items = () => Array.from(container.querySelectorAll(itemSelector));
      const move = (ev) => {
        if (!dragging) {
          if (Math.hypot(ev.clientX - x0, ev.clientY - y0) < 6) return;
          dragging = true;
          item.classList.add("is-dragging");
          container.classList.add("is-sorting");
          container.append(indicator);
        }
        ev.preventDefault();
        to = dropIndex(items(), ev.clientX, ev.clientY, container === this.grid);
        placeIndicator(indicator, container, items(), to, container === this.grid);
        autoScroll(container, ev.clientY);
      };
      const up = () => {
        window.removeEventListener("pointermove", move);
        window.removeEventListener("pointerup", up);
        window.removeEventListener("pointercancel", up);
        indicator.remove();
        item.classList.remove("is-dragging");
        container.classList.remove("is-sorting");
        if (!dragging) {
          // A plain click.
          if (container === this.grid) {
            this.go(from);
            this.setView("single");
          } else {
            this.go(from);
          }
          return;
        }
        const target = to > from ? to - 1 : to;
        if (target !== from) this.moveSlide(from, target);
      };
      window.addEventListener("pointermove", move);
      window.addEventListener("pointerup", up);
      window.addEventListener("pointercancel", up);
    };
    this.nav.addEventListener("pointerdown", start(this.nav, ".pns-thumb"));
    this.grid.addEventListener("pointerdown", start(this.grid, ".pns-tile"));
    const keys = (container, itemSelector) => (e) => {
      const item = e.target.closest && e.target.closest(itemSelector);
      if (!item) return;
      const i = Number(item.dataset.index);
      if (e.key === "Enter" || e.key === " ") {
        e.preventDefault();
        this.go(i);
        if (container === this.grid) this.setView("single");
      } else if (e.altKey && (e.key === "ArrowUp" || e.key === "ArrowLeft") && i > 0) {
        e.preventDefault();
        this.moveSlide(i, i - 1).then(() => this.focusSlot(container, i - 1));
      } else if (e.altKey && (e.key === "ArrowDown" || e.key === "ArrowRight") && i < this.deck.slides.length - 1) {
        e.preventDefault();
        this.moveSlide(i, i + 1).then(() => this.focusSlot(container, i + 1));
      }
    };
    this.nav.addEventListener("keydown", keys(this.nav, ".pns-thumb"));
    this.grid.addEventListener("keydown", keys(this.grid, ".pns-tile"));
  },

  focusSlot(container, i) {
    const item = container.querySelectorAll(container === this.grid ? ".pns-tile" : ".pns-thumb")[i];
    if (item) item.focus();
  },

  /** Move slide `from` to position `to` and rewrite manifest.json. */
  async moveSlide(from, to) {
    const order = this.deck.slides.map((s) => s.file);
    if (from < 0 || from >= order.length || to < 0 || to >= order.length || from === to) return;
    if (this.manifestError || !this.manifestData) {
      this.flash(this.t("reorder.refused", { reason: this.manifestProblemText() || this.t("manifest.missing") }), "error");
      return;
    }
    const currentFile = this.currentSlide && this.currentSlide.file;
    const [moved] = order.splice(from, 1);
    order.splice(to, 0, moved);
    const data = reorderManifest(this.manifestData, order);
    const text = formatManifest(data);
    // Show the new order at once; the write comes back as a "self" change.
    const previous = this.files.get(MANIFEST);
    this.files.set(MANIFEST, { ...(previous || {}), path: MANIFEST, content: text });
    this.readDeck();
    const idx = this.deck.slides.findIndex((s) => s.file === currentFile);
    if (idx >= 0) this.current = idx;
    this.render();
    try {
      await this.ctx.writeFile(MANIFEST, text);
      this.flash(this.t("reorder.moved", { title: this.deck.slides[to].title, n: to + 1 }));
    } catch (err) {
      if (previous) this.files.set(MANIFEST, previous);
      this.readDeck();
      this.render();
      this.flash(this.t("save.failed", { message: err && err.message ? err.message : err }), "error");
    }
    this.announceSlide();
  },

  /**
   * Append a slide file the manifest does not list to manifest.json, then
   * show it. The manifest is read from disk first, not from the last
   * snapshot, so an edit the agent made meanwhile is kept; a broken or
   * missing manifest is refused, as a reorder is.
   */
  async addToDeck(file) {
    const extra = this.extras.find((e) => e.file === file);
    if (!extra) return false;
    let text;
    try {
      const body = await fetchJson(`/api/files/read?path=${encodeURIComponent(MANIFEST)}`);
      text = body && body.content;
    } catch (err) {
      text = err && err.status === 404 ? null : undefined;
      if (text === undefined) {
        this.flash(this.t("extra.refused", { reason: err && err.message ? err.message : err }), "error");
        return false;
      }
    }
    const parsed = parseManifest(text);
    if (!parsed.ok) {
      const reason = parsed.errorKey ? this.t(parsed.errorKey, parsed.errorParams || {}) : parsed.error;
      this.flash(this.t("extra.refused", { reason }), "error");
      return false;
    }
    let index = parsed.slides.findIndex((s) => s.file === file);
    let next = text;
    if (index < 0) {
      next = formatManifest(appendToManifest(parsed.data, { file, title: extra.title }));
      index = parsed.slides.length;
      try {
        await this.ctx.writeFile(MANIFEST, next);
      } catch (err) {
        this.flash(this.t("save.failed", { message: err && err.message ? err.message : err }), "error");
        return false;
      }
    }
    // Show it at once; the write comes back as a "self" change with the same text.
    const previous = this.files.get(MANIFEST);
    this.files.set(MANIFEST, { ...(previous || {}), path: MANIFEST, content: next });
    this.readDeck();
    if (this.view !== "single" && !this.presenting) this.view = "single";
    this.current = Math.min(index, this.deck.slides.length - 1);
    this.selection = null;
    this.render();
    this.scrollThumbIntoView();
    this.announceSlide();
    this.savePosition();
    this.flash(this.t("extra.added", { title: this.deck.slides[this.current].title, n: this.current + 1 }));
    return true;
  },
};
