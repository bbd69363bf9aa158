// One slide in its own sandboxed iframe (a thumbnail, a grid tile, the stage,
// present mode): the viewer reads its DOM to select, measure and capture.

import { buildSlideHtml } from "./slide-doc.js";
import { h } from "/static/lib/viewer-helpers.js";

// ---- Frames --------------------------------------------------------------------

/**
 * One iframe showing one slide document. `paint()` swaps the theme and the
 * fragment in place once the document exists (no reload, no flash), and
 * falls back to srcdoc before that or when the frame was reloaded.
 */
export class SlideFrame {
  constructor(viewer, { interactive = false, className = "" } = {}) {
    this.viewer = viewer;
    this.interactive = interactive;
    this.iframe = h("iframe", {
      class: `pns-frame ${className}`,
      sandbox: "allow-same-origin",
      tabindex: interactive ? "0" : "-1",
      "aria-hidden": interactive ? null : "true",
    });
    this.want = null; // {file, fragment, theme}
    this.shown = null;
    this.ready = false;
    this.waiters = [];
    this.iframe.addEventListener("load", () => this.onLoad());
  }

  get doc() {
    try {
      const doc = this.iframe.contentDocument;
      return doc && doc.getElementById("pneuma-theme") ? doc : null;
    } catch {
      return null;
    }
  }

  paint(slide) {
    this.iframe.title = this.viewer.t("frame.title");
    const { width, height } = this.viewer.size;
    const want = { file: slide.file, fragment: slide.fragment, theme: this.viewer.theme, width, height };
    this.want = want;
    const doc = this.ready ? this.doc : null;
    const shown = this.shown;
    if (doc && shown && shown.width === width && shown.height === height) {
      if (shown.theme !== want.theme) doc.getElementById("pneuma-theme").textContent = want.theme;
      // `edited`: the person's edit in place changed the body since it was
      // painted, so even the fragment painted last (an undo's) is new to it.
      if (shown.fragment !== want.fragment || shown.file !== want.file || shown.edited) {
        doc.body.innerHTML = want.fragment;
        doc.documentElement.scrollTop = 0;
        doc.body.scrollTop = 0;
      }
      this.shown = want;
      this.viewer.afterPaint(this, doc);
      this.resolveWaiters();
      return;
    }
    this.ready = false;
    this.shown = want;
    // The body is filled in on load: in a srcdoc the preload scanner would
    // fetch the fragment's images before <base> applies (404s on /assets/).
    this.iframe.srcdoc = buildSlideHtml({ fragment: "", theme: want.theme, width, height,
      base: this.viewer.baseUrl });
  }

  onLoad() {
    const doc = this.doc;
    if (!doc) return; // about:blank before the first paint
    this.ready = true;
    // A frame moved in the DOM reloads its srcdoc, which may be older than
    // what was painted in place since: bring it up to date.
    const want = this.want;
    if (want) {
      if (doc.getElementById("pneuma-theme").textContent !== want.theme) {
        doc.getElementById("pneuma-theme").textContent = want.theme;
      }
      doc.body.innerHTML = want.fragment;
      this.shown = want;
    }
    this.viewer.afterLoad(this, doc);
    this.viewer.afterPaint(this, doc);
    this.resolveWaiters();
  }

  resolveWaiters() {
    const waiters = this.waiters;
    this.waiters = [];
    for (const resolve of waiters) resolve(this.doc);
  }

  /** The painted document, once it exists. */
  whenReady() {
    if (this.ready && this.doc) return Promise.resolve(this.doc);
    return new Promise((resolve) => this.waiters.push(resolve));
  }
}
