// One sheet of paper on screen: the paper at its size in CSS pixels, scaled
// to the zoom, a faint guide at the margins, the page's content in a frame
// laid in the content box, the page number where the export prints it
// (render.py: centred in the bottom margin) and the overflow flag.
//
// The frame is sandboxed without allow-scripts (workspace markup is
// untrusted: no script in it runs) but same-origin, so the viewer reads its
// DOM to measure, select and edit, as the slide viewer's frames do.

import { PX_PER_MM, contentBox, fragmentWithFallback, measureBody, pageDocument, preloadCjk, pxToMm, styleText } from "./print-doc.js";
import { h } from "/static/lib/viewer-helpers.js";

export class Sheet {
  constructor(viewer, position) {
    this.viewer = viewer;
    this.position = position; // 1-based
    this.page = null; // {file, title}
    this.fragment = null;
    this.stylesheet = null;
    this.fit = null;
    this.ready = false;
    this.waiters = [];
    this.iframe = h("iframe", { class: "pnp-frame", sandbox: "allow-same-origin", tabindex: "-1" });
    this.iframe.addEventListener("load", () => this.onLoad());
    this.guide = h("div", { class: "pnp-guide", "aria-hidden": "true" });
    this.number = h("div", { class: "pnp-number" });
    this.paper = h("div", { class: "pnp-paper" }, this.guide, this.iframe, this.number);
    this.flag = h("div", { class: "pnp-flag", role: "status" });
    this.markers = h("div", { class: "pnp-markers" });
    this.el = h("section", { class: "pnp-sheet", "data-page": String(position) },
      this.paper, this.markers, this.flag);
  }

  /** Size the paper to `doc` (mm) at `zoom`. */
  layout(doc, zoom) {
    const box = contentBox(doc);
    const px = (mm) => `${mm * PX_PER_MM}px`;
    const width = doc.width * PX_PER_MM;
    const height = doc.height * PX_PER_MM;
    Object.assign(this.paper.style, { width: `${width}px`, height: `${height}px`, transform: `scale(${zoom})` });
    Object.assign(this.el.style, { width: `${width * zoom}px`, height: `${height * zoom}px` });
    for (const target of [this.guide.style, this.iframe.style]) {
      Object.assign(target, { left: px(doc.margins.left), top: px(doc.margins.top), width: px(box.width), height: px(box.height) });
    }
    Object.assign(this.number.style, { height: px(doc.margins.bottom) });
    this.zoom = zoom;
    this.marginLeft = doc.margins.left * PX_PER_MM;
    this.marginTop = doc.margins.top * PX_PER_MM;
  }

  get doc() {
    try {
      const doc = this.iframe.contentDocument;
      return doc && doc.getElementById("pneuma-style") ? doc : null;
    } catch {
      return null;
    }
  }

  /** Show `page`'s `fragment` with `stylesheet`; in place once the frame's document exists. */
  paint(page, fragment, stylesheet, number) {
    this.page = page;
    this.el.dataset.file = page.file;
    this.number.textContent = number === null ? "" : String(number);
    const doc = this.ready ? this.doc : null;
    if (!doc) {
      this.fragment = fragment;
      this.stylesheet = stylesheet;
      this.ready = false;
      this.iframe.srcdoc = pageDocument({ stylesheet, base: this.viewer.baseUrl, cjkFont: this.viewer.cjkFont });
      return;
    }
    if (this.editing) { // the person is typing in it: paint when the edit ends
      this.pending = [page, fragment, stylesheet, number];
      return;
    }
    if (stylesheet !== this.stylesheet) {
      this.stylesheet = stylesheet;
      doc.getElementById("pneuma-style").textContent = styleText(stylesheet);
    }
    if (fragment !== this.fragment || this.edited) {
      this.fragment = fragment;
      this.edited = false;
      this.fill(doc, fragment).then((filled) => filled && this.settled());
      return;
    }
    this.settled();
  }

  onLoad() {
    const doc = this.doc;
    if (!doc) return;
    this.ready = true;
    this.viewer.wireFrame(this, doc);
    this.fill(doc, this.fragment || "").then((filled) => filled && this.settled());
  }

  /**
   * Put `fragment` in the page once the Chinese faces its text needs are
   * in: Chromium keeps the boxes it drew for text laid out while its face
   * was still on the way (the same text stays boxes after the face
   * arrives), so the faces come first. False when a newer fill won.
   */
  async fill(doc, fragment) {
    const token = (this.fillToken = (this.fillToken || 0) + 1);
    await preloadCjk(doc, fragment);
    if (token !== this.fillToken || this.doc !== doc) return false;
    doc.body.innerHTML = fragmentWithFallback(fragment);
    return true;
  }

  /** Fonts and images in, measure, tell the viewer. */
  async settled() {
    const doc = this.doc;
    if (!doc) return;
    try {
      if (doc.fonts) await doc.fonts.ready;
      const pending = [...doc.images].filter((img) => !img.complete);
      await Promise.all(pending.map((img) => new Promise((resolve) => { img.onload = img.onerror = resolve; })));
    } catch { /* a frame replaced meanwhile */ }
    if (this.doc !== doc) return;
    this.measure();
    this.viewer.afterPaint(this);
    const waiters = this.waiters;
    this.waiters = [];
    for (const resolve of waiters) resolve(doc);
  }

  measure() {
    this.fit = measureBody(this.doc);
    const over = !!(this.fit && this.fit.overflows);
    this.el.classList.toggle("is-overflowing", over);
    this.flag.hidden = !over;
    if (over) {
      const mm = Math.max(pxToMm(this.fit.overflowY), pxToMm(this.fit.overflowX));
      this.flag.textContent = this.viewer.t("sheet.overflows", { mm: mm.toFixed(1) });
    }
    return this.fit;
  }

  /** The painted document, once it is there and measured. */
  whenReady() {
    if (this.ready && this.doc && this.fit) return Promise.resolve(this.doc);
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  /** An element's box in the sheet's on-screen pixels (for pins). */
  boxOf(el) {
    const rect = el.getBoundingClientRect();
    const z = this.zoom || 1;
    return { left: (this.marginLeft + rect.left) * z, top: (this.marginTop + rect.top) * z,
      width: rect.width * z, height: rect.height * z };
  }
}
