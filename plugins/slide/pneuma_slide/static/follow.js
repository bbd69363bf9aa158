// The SlideViewer's side of "Follow the agent" (docs/viewer-contract.md,
// "Follow the agent"): bring a changed slide to the front, and know which
// slides are broken (content that sticks out of the canvas, a file the
// manifest lists that does not exist), measured by itself whenever a slide
// changes, so the thumbnails carry the mark before anyone asks. Mixed into
// the viewer's prototype.

import { normalizePath } from "./slide-doc.js";

// Measure a little after the last change: an agent writes several files in
// a row, and one pass over them is cheaper than one per file.
const FIT_DEBOUNCE_MS = 250;

export const following = {
  /** Show `path`'s slide (true), or answer false for a file that is no slide of the deck. */
  async reveal(path) {
    const file = normalizePath(path || "");
    const index = this.deck.slides.findIndex((s) => s.file === file);
    if (index < 0 || this.destroyed) return false;
    this.go(index);
    return true;
  },

  /** {file: reason} for each slide that overflows or is missing, in the person's language. */
  problems() {
    const found = {};
    for (const meta of this.deck.slides) {
      const entry = this.files.get(meta.file);
      if (!entry || typeof entry.content !== "string") {
        found[meta.file] = this.t("badge.missingTitle", { file: meta.file });
        continue;
      }
      const fit = this.fitResults.get(meta.file);
      if (fit && !fit.fits) found[meta.file] = this.overflowReason(fit);
    }
    return found;
  },

  /** One line: how far the content sticks out, and where. */
  overflowReason(fit) {
    const where = (fit.elements || []).slice(0, 3).map((e) => e.selector).join("; ");
    return this.t("problem.overflow", { amount: this.overflowAmount(fit), where });
  },

  overflowAmount(fit) {
    const parts = [];
    if (fit.overflowY) parts.push(`${fit.overflowY}px ↕`);
    if (fit.overflowX) parts.push(`${fit.overflowX}px ↔`);
    return parts.join(" ");
  },

  /**
   * Measure these slide files (all of the deck's when `files` is null) soon.
   * Calls made before the measuring starts are merged into one pass.
   */
  scheduleFitCheck(files) {
    if (!this.fitPending) this.fitPending = new Set();
    if (files === null) this.fitPending.add("*");
    else for (const file of files) this.fitPending.add(file);
    clearTimeout(this.fitTimer);
    this.fitTimer = setTimeout(() => this.runFitCheck(), FIT_DEBOUNCE_MS);
  },

  async runFitCheck() {
    if (this.destroyed || !this.fitPending || !this.fitPending.size) return;
    if (this.fitRunning) {
      // One pass at a time; the files asked for meanwhile go in the next one.
      this.fitTimer = setTimeout(() => this.runFitCheck(), FIT_DEBOUNCE_MS);
      return;
    }
    const all = this.fitPending.has("*");
    const listed = new Set(this.deck.slides.map((s) => s.file));
    const files = all ? [...listed] : [...this.fitPending].filter((f) => listed.has(f));
    this.fitPending.clear();
    if (!files.length) return;
    this.fitRunning = true;
    try {
      await this.checkContentFit({ slides: files });
    } catch {
      /* a slide that cannot be measured now is measured again when it next changes */
    } finally {
      this.fitRunning = false;
    }
  },

  /** After a content_update: the changed slides (every slide when theme.css changed) are measured again. */
  fitCheckAfter(changes, themeFile, manifestFile) {
    const paths = changes.map((c) => normalizePath(c.path || ""));
    if (paths.includes(themeFile)) {
      this.scheduleFitCheck(null);
      return;
    }
    const listed = new Set(this.deck.slides.map((s) => s.file));
    const slides = paths.filter((p) => listed.has(p));
    // A manifest that now lists a slide never measured (it was "not in the deck").
    if (paths.includes(manifestFile)) slides.push(...[...listed].filter((f) => !this.fitResults.has(f)));
    if (slides.length) this.scheduleFitCheck(slides);
  },
};
