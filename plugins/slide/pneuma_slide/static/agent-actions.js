// The SlideViewer's answers to the agent's viewer actions (content fit,
// screenshots, what is on screen, navigation) and the check the person can
// run from the toolbar; mixed into its prototype.

import { plural } from "./controls.js";
import { SlideFrame } from "./frames.js";
import {
  assetRefs, captureDocument, measureOverflow, normalizePath, settle, slideSize,
} from "./slide-doc.js";

export const agentActions = {
  async checkFromUi() {
    this.fitBtn.disabled = true;
    try {
      // The action's message is for the agent (English); the person gets a summary in their language.
      const result = await this.checkContentFit({});
      const slides = (result.data && result.data.slides) || [];
      const bad = slides.filter((r) => !r.fits);
      const size = `${this.size.width}×${this.size.height}`;
      const text = !result.success ? this.t("stage.empty")
        : bad.length ? this.t("fit.someOverflow", { bad: bad.length, count: slides.length, size,
          files: bad.map((r) => r.file).join(", ") })
          : this.t("fit.allFit", { count: slides.length, size });
      this.flash(text, result.success && !bad.length ? "ok" : "error", 6000);
    } finally {
      this.fitBtn.disabled = false;
    }
  },

  // -- measuring and capturing in fresh, off-screen frames

  async renderOffscreen(slide, fn) {
    const frame = new SlideFrame(this, { className: "pns-frame--measure" });
    this.measureHost.append(frame.iframe);
    try {
      frame.paint(slide);
      const doc = await frame.whenReady();
      await settle(doc);
      return await fn(doc);
    } finally {
      frame.iframe.remove();
    }
  },

  resolveFiles(list) {
    const known = this.deck.slides.map((s) => s.file);
    const wanted = [];
    const unknown = [];
    for (const raw of list) {
      const file = normalizePath(raw);
      if (known.includes(file)) wanted.push(file);
      else unknown.push(String(raw));
    }
    return { wanted, unknown, known };
  },

  async checkContentFit(params) {
    const slides = this.deck.slides;
    if (!slides.length) return { success: false, message: "The deck has no slides (manifest.json lists none)." };
    let files = slides.map((s) => s.file);
    if (params && Array.isArray(params.slides) && params.slides.length) {
      const { wanted, unknown, known } = this.resolveFiles(params.slides);
      if (unknown.length) {
        return { success: false, message: `Not in manifest.json: ${unknown.join(", ")}. Slides: ${known.join(", ")}`,
          data: { unknown, slides: known } };
      }
      files = wanted;
    }
    const { width, height } = this.size;
    const known = new Set(this.files.keys());
    const results = new Array(files.length);
    let next = 0;
    const worker = async () => {
      while (next < files.length) {
        const i = next++;
        const index = slides.findIndex((s) => s.file === files[i]);
        const slide = this.slideAt(index);
        if (slide.missing) {
          results[i] = { file: slide.file, index: index + 1, title: slide.title, fits: false, overflowX: 0, overflowY: 0,
            elements: [], missing: true };
          continue;
        }
        results[i] = await this.renderOffscreen(slide, (doc) => {
          const m = measureOverflow(doc, width, height);
          const missingAssets = assetRefs(doc).filter((p) => !known.has(p));
          const entry = { file: slide.file, index: index + 1, title: slide.title, ...m };
          if (missingAssets.length) entry.missingAssets = missingAssets;
          return entry;
        });
      }
    };
    await Promise.all([worker(), worker(), worker(), worker()]);
    for (const r of results) this.fitResults.set(r.file, r);
    this.renderNav();
    if (this.view === "grid") this.renderGrid();
    const bad = results.filter((r) => !r.fits);
    const lines = [];
    if (!bad.length) lines.push(`All ${plural(results.length, "slide")} checked fit the ${width}×${height} canvas.`);
    else lines.push(`${bad.length} of ${plural(results.length, "slide")} checked do not fit the ${width}×${height} canvas:`);
    for (const r of bad) {
      if (r.missing) { lines.push(`- ${r.file}: the file does not exist`); continue; }
      const where = [];
      if (r.overflowY) where.push(`${r.overflowY}px vertically`);
      if (r.overflowX) where.push(`${r.overflowX}px horizontally`);
      lines.push(`- ${r.file} (slide ${r.index}) overflows by ${where.join(" and ")}: ${r.elements.slice(0, 3).map((e) => e.selector).join("; ")}`);
    }
    const withMissing = results.filter((r) => r.missingAssets);
    for (const r of withMissing) lines.push(`- ${r.file} refers to missing files: ${r.missingAssets.join(", ")}`);
    return { success: true, message: lines.join("\n"), data: { slideWidth: width, slideHeight: height, slides: results } };
  },

  async captureScreenshot(params) {
    let slide = this.currentSlide;
    if (params && params.file) {
      const { wanted, unknown, known } = this.resolveFiles([params.file]);
      if (unknown.length) {
        return { success: false, message: `No slide "${params.file}" in manifest.json. Slides: ${known.join(", ")}`,
          data: { slides: known } };
      }
      slide = this.slideAt(this.deck.slides.findIndex((s) => s.file === wanted[0]));
    }
    if (!slide) return { success: false, message: "The deck has no slides to capture." };
    if (slide.missing) return { success: false, message: `${slide.file} does not exist.` };
    const { width, height } = this.size;
    const dataUrl = await this.renderOffscreen(slide, (doc) => captureDocument(doc, { width, height, theme: this.theme }));
    const stem = slide.file.split("/").pop().replace(/\.html?$/i, "").replace(/[^A-Za-z0-9._-]+/g, "-");
    const name = `slide-${stem}`;
    let saved;
    if (this.ctx.saveCapture) {
      saved = await this.ctx.saveCapture(name, dataUrl);
    } else {
      const res = await fetch("/api/captures", { method: "POST", credentials: "same-origin",
        headers: { "Content-Type": "application/json" }, body: JSON.stringify({ name, data: dataUrl }) });
      saved = await res.json();
      if (!res.ok) throw new Error((saved.error && saved.error.message) || `capture failed (${res.status})`);
    }
    return {
      success: true,
      message: `Saved a ${width}×${height} PNG of ${slide.file} (slide ${slide.index + 1}) to ${saved.path}`,
      data: { path: saved.path, file: slide.file, index: slide.index + 1, width, height },
    };
  },

  describeView() {
    const slide = this.currentSlide;
    const view = this.presenting ? "present" : this.view;
    const sel = this.selection && slide && this.selection.file === slide.file
      ? { file: slide.file, index: slide.index + 1, ...this.selection.info } : null;
    const viewName = { single: "single-slide view", grid: "grid view", present: "full-screen presentation" }[view];
    let message;
    if (!slide) {
      message = `The deck has no slides; ${viewName}.`;
    } else {
      message = `Slide ${slide.index + 1} of ${this.deck.slides.length} ("${slide.title}", ${slide.file}) in ${viewName}; `
        + `outline ${this.outlineVisible ? "visible" : "hidden"}; `
        + (sel ? `selected <${sel.tag}${sel.classes.length ? ` class="${sel.classes.join(" ")}"` : ""}> "${sel.text}" (${sel.selector}).`
          : "nothing selected.");
    }
    if (this.manifestError) message += ` Warning: ${this.manifestError}.`;
    const notInDeck = this.extras.map((e) => e.file);
    if (notInDeck.length) message += ` Not in manifest.json (shown to the person as "not in the deck"): ${notInDeck.join(", ")}.`;
    return {
      success: true,
      message,
      data: {
        view,
        outlineVisible: this.outlineVisible,
        current: slide ? { index: slide.index + 1, file: slide.file, title: slide.title } : null,
        total: this.deck.slides.length,
        deckTitle: this.deck.title,
        slideSize: { ...this.size },
        zoom: this.stageScale ? Math.round(this.stageScale * 100) / 100 : null,
        selection: sel,
        slides: this.deck.slides.map((s, i) => ({ index: i + 1, file: s.file, title: s.title })),
        manifestError: this.manifestError,
        notInDeck,
      },
    };
  },

  async runAction(actionId, params = {}) {
    params = params || {};
    switch (actionId) {
      case "navigate-to": {
        const raw = params.file;
        if (typeof raw !== "string" || !raw.trim()) return { success: false, message: "navigate-to needs {\"file\": \"slides/NN-slug.html\"}" };
        const file = normalizePath(raw);
        const index = this.deck.slides.findIndex((s) => s.file === file);
        if (index < 0) {
          const known = this.deck.slides.map((s) => s.file);
          return { success: false, message: `No slide "${raw}" in manifest.json. Slides: ${known.join(", ") || "none"}`,
            data: { slides: known } };
        }
        if (this.view !== "single" && !this.presenting) this.setView("single");
        this.go(index);
        const slide = this.currentSlide;
        return { success: true, message: `Showing slide ${index + 1} of ${this.deck.slides.length}: "${slide.title}"`,
          data: { file: slide.file, index: index + 1, title: slide.title, total: this.deck.slides.length } };
      }
      case "ui:toggle-outline": {
        const visible = this.toggleOutline(typeof params.visible === "boolean" ? params.visible : undefined);
        return { success: true, message: `The outline is now ${visible ? "visible" : "hidden"}.`, data: { outlineVisible: visible } };
      }
      case "checkContentFit":
        return this.checkContentFit(params);
      case "describe-view":
        return this.describeView();
      case "capture-screenshot":
        return this.captureScreenshot(params);
      default:
        return { success: false, message: `${actionId} is not supported by the slide viewer` };
    }
  },
};
