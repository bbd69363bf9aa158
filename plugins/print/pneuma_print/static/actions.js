// The PrintViewer's viewer actions (manifest viewerApi): what the agent
// asks of the page, answered in English from the pages as drawn. Mixed
// into the viewer's prototype.

import { overflowWords, pageContents, paperLabel, pxToMm, round1 } from "./print-doc.js";

export const agentActions = {
  async runAction(actionId, params = {}) {
    if (actionId === "navigate-to") return this.navigateTo(params);
    if (actionId === "describe-view") return this.describeView();
    if (actionId === "get-page") return this.getPage(params);
    if (actionId === "check-overflow") return this.checkOverflow(params);
    if (actionId === "ui:zoom") {
      const ok = this.setZoom(params.zoom);
      return ok ? { success: true, message: `Zoom: ${this.zoomMode}` }
        : { success: false, message: `zoom must be fit-width, fit-page or 50–200, not ${JSON.stringify(params.zoom)}` };
    }
    return { success: false, message: `${actionId} is not supported by the print viewer` };
  },

  noDocument() {
    return { success: false, message: this.problem ? this.problem.error : "print.json is missing: this is not a print document" };
  },

  badPage(page) {
    const count = this.doc.pages.length;
    return { success: false, message: `No page ${JSON.stringify(page)}: give a number from 1 to ${count} or a file listed in print.json` };
  },

  overflowLine(sheet) {
    return `overflows its content box ${overflowWords(sheet.fit)}`;
  },

  /** One sheet's facts, measured once it is painted. */
  async pageFacts(index, withContents) {
    const sheet = this.sheets[index];
    await sheet.whenReady();
    const fit = sheet.measure() || { overflowX: 0, overflowY: 0, overflows: false, fill: 0 };
    const facts = {
      page: index + 1,
      file: sheet.page.file,
      title: sheet.page.title,
      missing: !!sheet.missing,
      ...(sheet.missing ? { problem: unreadableLine(sheet) } : {}),
      fill_percent: fit.fill,
      overflows: fit.overflows,
      overflow_mm: { bottom: round1(pxToMm(fit.overflowY)), right: round1(pxToMm(fit.overflowX)) },
    };
    return withContents ? { ...facts, ...pageContents(sheet.doc) } : facts;
  },

  /** The page `params` names: its file when print.json still lists it (a
   * change's locate may carry a number from before pages moved), else its number. */
  pageIndex(params) {
    const byFile = params.file ? this.indexOf(params.file) : -1;
    return byFile >= 0 || params.page === undefined || params.page === null ? byFile : this.indexOf(params.page);
  },

  async navigateTo(params) {
    if (!this.doc) return this.noDocument();
    const index = this.pageIndex(params);
    if (index < 0) return this.badPage(params.file ?? params.page);
    this.go(index);
    const facts = await this.pageFacts(index, false);
    const fit = facts.overflows ? this.overflowLine(this.sheets[index]) : "fits its content box";
    return { success: true, message: `Showing page ${index + 1} of ${this.doc.pages.length} (${facts.file}, "${facts.title}"): it ${fit}, ${facts.fill_percent}% full.`, data: facts };
  },

  async getPage(params) {
    if (!this.doc) return this.noDocument();
    const given = params.file ?? params.page;
    const index = given === undefined || given === null || given === "" ? this.current : this.pageIndex(params);
    if (index < 0) return this.badPage(given);
    const facts = await this.pageFacts(index, true);
    const fit = facts.overflows ? this.overflowLine(this.sheets[index]) : "fits its content box";
    const lines = [
      `Page ${facts.page} of ${this.doc.pages.length}: ${facts.file} "${facts.title}", ${facts.fill_percent}% full, ${fit}.`,
      facts.headings.length ? `Headings: ${facts.headings.map((x) => `h${x.level} "${x.text}"`).join("; ")}` : "No headings.",
      facts.images.length ? `Images and figures: ${facts.images.length}` : "No images.",
      `Text: ${facts.text}`,
    ];
    return { success: true, message: lines.join("\n"), data: facts };
  },

  async checkOverflow(params) {
    if (!this.doc) return this.noDocument();
    const asked = Array.isArray(params.pages) && params.pages.length ? params.pages : null;
    const indices = asked ? asked.map((p) => this.indexOf(p)) : this.doc.pages.map((_, i) => i);
    const bad = asked ? asked.filter((_, i) => indices[i] < 0) : [];
    if (bad.length) return this.badPage(bad[0]);
    const pages = [];
    for (const index of indices) pages.push(await this.pageFacts(index, false));
    const over = pages.filter((p) => p.overflows);
    const box = this.contentBoxMm;
    const head = `${paperLabel(this.doc)}, content box ${round1(box.width)} × ${round1(box.height)} mm.`;
    const message = over.length
      ? `${head} ${over.length} of ${pages.length} page(s) overflow: ${over.map((p) => `page ${p.page} (${p.file}) ${this.overflowLine(this.sheets[p.page - 1])}`).join("; ")}.`
      : `${head} All ${pages.length} checked page(s) fit.`;
    return { success: true, message, data: { paper: paperLabel(this.doc), content_box_mm: { width: round1(box.width), height: round1(box.height) }, pages, overflowing: over.map((p) => p.page) } };
  },

  describeView() {
    if (!this.doc) return this.noDocument();
    const sheet = this.sheets[this.current];
    const over = this.sheets.filter((s) => s.fit && s.fit.overflows).map((s) => s.position);
    const sel = this.selection;
    const lines = [
      `Document "${this.doc.title}" on ${paperLabel(this.doc)} (${round1(this.doc.width)} × ${round1(this.doc.height)} mm), ${this.doc.pages.length} page(s).`,
      sheet ? `In view: page ${sheet.position} (${sheet.page.file}, "${sheet.page.title}").` : "No page in view.",
      `Zoom: ${this.zoomMode} (${Math.round(this.zoom * 100)}%).`,
      over.length ? `Overflowing pages: ${over.join(", ")}.` : "No page overflows.",
      sel ? `Selected on page ${sel.page}: <${sel.info.tag}> "${sel.info.text}" (${sel.info.selector}).` : "Nothing selected.",
    ];
    const unreadable = this.sheets.filter((s) => s.missing);
    if (unreadable.length) {
      lines.push(`Pages not drawn: ${unreadable.map((s) => `page ${s.position} ${unreadableLine(s)}`).join("; ")}.`);
    }
    if (this.problem) lines.push(`print.json problem: ${this.problem.error}`);
    return {
      success: true,
      message: lines.join("\n"),
      data: { title: this.doc.title, paper: paperLabel(this.doc), page: sheet ? sheet.position : null,
        file: sheet ? sheet.page.file : null, zoom: this.zoomMode, overflowing: over,
        selection: sel ? { page: sel.page, file: sel.file, ...sel.info } : null,
        unreadable: unreadable.map((s) => ({ page: s.position, file: s.page.file, problem: unreadableLine(s) })) },
    };
  },
};

/** What the agent is told about a listed page the viewer cannot draw. */
export function unreadableLine(sheet) {
  return sheet.missing === "notText"
    ? `(${sheet.page.file}) is not a text file: write the page as HTML`
    : `(${sheet.page.file}) is listed in print.json but does not exist`;
}
