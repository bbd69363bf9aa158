// The SlideViewer's methods for present mode, the keyboard and pointing at
// elements on a slide (selection and hover); mixed into its prototype.

import { SlideFrame } from "./frames.js";
import { describeElement } from "./slide-doc.js";
import { h } from "/static/lib/viewer-helpers.js";

export const pointing = {
  present() {
    if (!this.deck.slides.length) return;
    if (this.presenting) return;
    this.presenting = true;
    this.presentFrame = new SlideFrame(this, { className: "pns-frame--present" });
    this.presentBox = h("div", { class: "pns-present-box" }, this.presentFrame.iframe);
    this.presentCounter = h("div", { class: "pns-present-counter" });
    this.presentHint = h("div", { class: "pns-present-hint" });
    this.presentEl = h("div", { class: "pns-present", tabindex: "-1", role: "dialog" },
      this.presentBox, this.presentCounter, this.presentHint);
    this.applyLabels();
    this.setSizeVars(this.presentEl);
    this.presentEl.addEventListener("click", (e) => {
      if (e.target === this.presentEl) this.go(this.current + 1);
    });
    document.body.append(this.presentEl);
    this.renderPresent();
    this.layout();
    this.presentEl.focus();
    if (this.presentEl.requestFullscreen) {
      this.presentEl.requestFullscreen().catch(() => { /* the overlay still fills the window */ });
    }
  },

  renderPresent() {
    const slide = this.currentSlide;
    if (!slide || !this.presentFrame) return;
    this.presentFrame.paint(slide);
    this.presentCounter.textContent = `${slide.index + 1} / ${this.deck.slides.length}`;
  },

  leavePresent() {
    if (!this.presenting) return;
    this.presenting = false;
    if (document.fullscreenElement) document.exitFullscreen().catch(() => {});
    if (this.presentEl) this.presentEl.remove();
    this.presentEl = null;
    this.presentFrame = null;
    this.render();
    this.root.focus({ preventScroll: true });
  },

  onKey(e, fromFrame) {
    if (this.destroyed || this.editing || e.defaultPrevented || e.altKey || e.ctrlKey || e.metaKey) return;
    if (!fromFrame && !this.presenting) {
      // Only when the person is in the viewer, never while typing in the chat.
      const t = e.target;
      const inViewer = t === document.body || (t && this.root.contains(t));
      if (!inViewer || (t && t.matches && t.matches("input, textarea, select, [contenteditable]"))) return;
    }
    const key = e.key;
    let handled = true;
    if (key === "ArrowRight" || key === "PageDown" || (key === " " && this.presenting) || (key === "ArrowDown" && this.presenting)) {
      this.go(this.current + 1);
    } else if (key === "ArrowLeft" || key === "PageUp" || (key === "ArrowUp" && this.presenting)) {
      this.go(this.current - 1);
    } else if (key === "Home") {
      this.go(0);
    } else if (key === "End") {
      this.go(this.deck.slides.length - 1);
    } else if (key === "Escape") {
      if (this.presenting) this.leavePresent();
      else if (this.selection) this.clearSelection();
      else handled = false;
    } else if ((key === "f" || key === "F5") && !this.presenting && fromFrame) {
      this.present();
    } else {
      handled = false;
    }
    if (handled) e.preventDefault();
  },

  // -- selection inside the slide on screen

  onSlideClick(e, doc) {
    // Clicks inside the text being edited place the caret.
    if (this.editing && this.editing.el.contains(e.target)) return;
    e.preventDefault();
    e.stopPropagation();
    // The second click of a double-click (which edits the text) keeps the selection the first one made.
    if (e.detail > 1) return;
    let el = e.target;
    if (!el || el.nodeType !== 1) return;
    if (el === doc.documentElement || el === doc.body) el = doc.body.firstElementChild || doc.body;
    if (el === doc.body) return;
    const slide = this.currentSlide;
    if (this.selection && this.selection.el === el) {
      this.clearSelection();
      return;
    }
    this.clearMarks(doc, "data-pneuma-selected");
    el.setAttribute("data-pneuma-selected", "");
    this.selection = { file: slide.file, el, info: describeElement(el) };
    this.publishSelection({ byPerson: true });
  },

  clearSelection() {
    const doc = this.stageFrame.doc;
    if (doc) this.clearMarks(doc, "data-pneuma-selected");
    this.selection = null;
    this.publishSelection();
  },

  /** After a re-render, mark the selected element again (by its selector). */
  restoreSelection(doc) {
    const sel = this.selection;
    this.clearMarks(doc, "data-pneuma-selected");
    if (!sel || sel.file !== (this.currentSlide && this.currentSlide.file)) return;
    let el = null;
    try { el = doc.querySelector(sel.info.selector); } catch { el = null; }
    if (el) {
      sel.el = el;
      el.setAttribute("data-pneuma-selected", "");
      const info = describeElement(el);
      if (info.text !== sel.info.text || info.selector !== sel.info.selector) {
        sel.info = info;
        this.publishSelection();
      }
    }
  },

  onSlideHover(e, doc) {
    const el = e.target;
    this.clearHover(doc);
    if (el && el.nodeType === 1 && el !== doc.body && el !== doc.documentElement) el.setAttribute("data-pneuma-hover", "");
  },

  clearHover(doc) {
    this.clearMarks(doc, "data-pneuma-hover");
  },

  clearMarks(doc, attr) {
    for (const el of doc.querySelectorAll(`[${attr}]`)) el.removeAttribute(attr);
  },
};
