// The illustrate mode's viewer: board.json's rows of images, variants of one
// prompt side by side, a larger view of one image with its record (prompt,
// model, seed, the chain of images it was made from), and the person's marks
// on each image (pick, reject, star, comment) written to choices.json at once.
//
// Implements the viewer contract (docs/viewer-contract.md): the default
// export has mount(element, ctx), extractContext(selection, files),
// resolveItems(files) and capabilities ["annotate", "edit", "follow"]; mount
// returns {update, runAction, clearSelection, destroy}, the pin methods of
// pins.js, the title editing of title-edit.js (a double click on a title)
// and reveal/problems of follow.js. The
// marks the agent has not been told of yet go with the person's next message
// inside its <viewer-context> (choices.js keeps the baseline). In a snapshot
// mount (ctx.readOnly: Compare, the timeline, a shared page) the marks are
// shown, not editable.

import { fetchJson, h, sharedStylesheet } from "/static/lib/viewer-helpers.js";
import { CHOICES_FILE, findImage, isBlank, layout, parentChain, promptOf, readChoices } from "./board.js";
import { ChoicesWriter, SeenMarks } from "./choices.js";
import { followMethods } from "./follow.js";
import { translator } from "./i18n.js";
import { pinMethods } from "./pins.js";
import { describeView, getChoices } from "./report.js";
import { titleMethods } from "./title-edit.js";

const MODE = "illustrate";
const CSS_URL = new URL("./viewer.css", import.meta.url).href;
const STATUS_URL = "/api/illustrate/provider"; // {ready, problem, what_to_set}: the mode's route (routes.py)
// What makes images possible, one way a line (docs/illustrate.md, "Configuring an image provider").
const SETTINGS_TO_SET = ["PNEUMA_IMAGES_BASE_URL + PNEUMA_IMAGES_MODEL", "OPENAI_API_KEY", "~/.config/pneuma/images.json"];
const NAV_WAIT_MS = 5000; // navigate-to right after the tool wrote: the files may still be arriving

const stylesheet = sharedStylesheet(CSS_URL, { "data-pneuma-illustrate": "" });
let live = null; // the live mount: extractContext asks it which marks the agent has not seen

function attr(value) {
  return String(value ?? "").replace(/&/g, "&amp;").replace(/"/g, "&quot;").replace(/</g, "&lt;");
}

function text(value) {
  return String(value ?? "").replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
}

class IllustrateViewer {
  constructor(element, ctx) {
    this.element = element;
    this.ctx = ctx;
    this.readOnly = Boolean(ctx.readOnly);
    this.t = translator(() => ctx.locale || "en");
    this.open = null; // the image in the large view
    this.selected = null; // the selected image's id
    this.pins = [];
    this.notice = "";
    this.provider = null; // {configured, ready, problem, what_to_set} from the mode's route
    this.waiters = [];
    this.unreadable = new Set(); // images whose file the browser could not draw (not a picture, or refused)
    this.writer = this.readOnly ? null : new ChoicesWriter(ctx);
    this.seen = this.readOnly ? null : new SeenMarks(ctx.files, location.pathname);
    this.root = h("div", { class: "il-root" });
    element.replaceChildren(this.root);
    this.stopLocale = ctx.onLocaleChange ? ctx.onLocaleChange(() => this.render()) : null;
    this.render();
    if (!this.readOnly) this.loadProviderStatus();
  }

  get files() {
    return this.ctx.files || [];
  }

  marks() {
    return this.writer ? this.writer.marks(this.files) : readChoices(this.files).choices;
  }

  // --- the agent's view of the marks --------------------------------------------------

  /** The marks the agent has not been told of, now counted as told. */
  takePending() {
    if (!this.seen) return [];
    const current = this.marks();
    const pending = this.seen.pending(current);
    if (pending.length) {
      this.seen.delivered(current);
      queueMicrotask(() => this.renderHeader());
    }
    return pending;
  }

  pendingCount() {
    return this.seen ? this.seen.pending(this.marks()).length : 0;
  }

  // --- files ---------------------------------------------------------------------------

  update(files, changes) {
    if (!changes) this.unreadable.clear();
    for (const change of changes || []) this.unreadable.delete(imageIdOf(change.path));
    if (this.writer && (changes || []).some((c) => c.path === CHOICES_FILE)) this.writer.fileChanged(files);
    this.render();
    const waiters = this.waiters;
    this.waiters = [];
    waiters.forEach((resolve) => resolve());
  }

  nextUpdate(ms) {
    return new Promise((resolve) => {
      this.waiters.push(resolve);
      setTimeout(resolve, ms);
    });
  }

  async loadProviderStatus() {
    try {
      this.provider = await fetchJson(STATUS_URL);
    } catch {
      this.provider = null; // no such route (an older host) or not reachable: say nothing
    }
    this.renderHeader();
  }

  // --- drawing -------------------------------------------------------------------------

  render() {
    if (this.editing) return; // a title being edited: drawn again when the edit ends
    this.view = layout(this.files);
    const t = this.t;
    this.header = h("header", { class: "il-header" });
    const main = h("main", { class: "il-rows", "aria-label": t("board.label") });
    if (this.view.error) {
      main.append(h("p", { class: "il-problem", role: "alert", text: t("board.error", { message: this.view.error }) }));
    } else if (!this.view.rows.length) {
      main.append(h("div", { class: "il-empty" }, h("h2", { text: t("empty.title") }), h("p", { text: t("empty.body") })));
    }
    if (this.view.warnings.length) {
      main.append(h("p", { class: "il-problem", role: "alert", text: t("board.warnings", { message: this.view.warnings.join("; ") }) }));
    }
    const choicesError = readChoices(this.files).error;
    if (choicesError) main.append(h("p", { class: "il-problem", role: "alert", text: t("choices.error", { message: choicesError }) }));
    for (const row of this.view.rows) main.append(this.rowElement(row));
    const keepDetail = this.detail && this.detail.contains(document.activeElement) && this.detail.dataset.imageId === this.open;
    if (!keepDetail) this.detail = this.detailElement();
    this.root.replaceChildren(this.header, h("div", { class: "il-body" }, main, this.detail));
    this.main = main;
    this.renderHeader();
    this.renderPins();
  }

  renderHeader() {
    if (!this.header || this.editing) return;
    const t = this.t;
    const title = h("h1", { class: "il-title", text: this.view.title || t("board.untitled") });
    if (!this.readOnly && !this.view.error && !this.view.missing) {
      title.title = t("edit.hint");
      title.addEventListener("dblclick", () => this.editTitle(title, null, this.view.title));
    }
    const parts = [title];
    const count = this.readOnly ? 0 : this.pendingCount();
    if (count) parts.push(h("p", { class: "il-pending", "data-pending": String(count), text: t("pending.note", { count }) }));
    if (this.notice) parts.push(h("p", { class: "il-problem", role: "alert", text: this.notice }));
    if (this.provider && this.provider.ready === false) {
      // What to set, in the page's language; the problem itself is the
      // host's sentence (English, as the terminal says it), shown as code.
      // Folded by a click on its title (and kept folded across redraws): it
      // says the same thing on every load, the board matters more.
      const notice = h("details", { class: "il-provider", role: "status" },
        h("summary", {}, h("strong", { text: t(this.provider.configured ? "provider.problemTitle" : "provider.title") })),
        h("p", { text: t("provider.body") }),
        h("ul", {}, SETTINGS_TO_SET.map((names) => h("li", {}, h("code", { text: names })))),
        this.provider.configured && this.provider.problem ? h("code", { class: "il-provider-problem", text: String(this.provider.problem) }) : null);
      notice.open = !this.providerFolded;
      notice.addEventListener("toggle", () => { this.providerFolded = !notice.open; });
      parts.push(notice);
    }
    this.header.replaceChildren(...parts);
  }

  rowElement(row) {
    const t = this.t;
    const title = row.unlisted ? t("row.unlisted") : row.title || row.id;
    // Named by its heading (aria-labelledby): the title is the agent's words, not a label of ours.
    const headingId = `il-row-${this.rowCount = (this.rowCount || 0) + 1}`;
    const heading = h("h2", { id: headingId, text: title });
    if (!this.readOnly && !row.unlisted) {
      heading.title = t("edit.hint");
      heading.addEventListener("dblclick", () => this.editTitle(heading, row.id, row.title));
    }
    return h("section", { class: "il-row", "data-row-id": row.id, "aria-labelledby": headingId },
      h("div", { class: "il-row-head" },
        heading,
        h("p", { class: "il-row-prompt", text: row.unlisted ? t("row.unlistedNote") : row.prompt })),
      h("div", { class: "il-variants" }, row.images.map((cell) => this.card(cell, row))));
  }

  card(cell, row) {
    const mark = this.markOf(cell.id);
    const classes = ["il-card", mark.status ? `il-${mark.status}` : "", mark.starred ? "il-starred" : "",
      this.selected === cell.id ? "il-selected" : ""].filter(Boolean).join(" ");
    const picture = this.picture(cell, {});
    return h("figure", {
      class: classes, "data-image-id": cell.id, "data-row-id": row.id,
      "data-status": mark.status || "", "data-starred": String(mark.starred),
    },
    h("button", { type: "button", class: "il-thumb", title: cell.id, onclick: () => this.choose(cell.id) }, picture),
    h("figcaption", {}, h("span", { class: "il-id", text: cell.id }), this.badges(mark)),
    this.readOnly ? null : this.markButtons(cell.id, mark),
    mark.comment ? h("p", { class: "il-comment", text: mark.comment }) : null);
  }

  /** An image's <img>, or what stands in its place: the file is missing, or
   * the browser could not draw it (not a picture, or the host refused it). */
  picture(cell, attrs) {
    if (!cell.path) return h("span", { class: "il-missing", text: this.t("image.missing") });
    if (this.unreadable.has(cell.id)) return h("span", { class: "il-missing il-unreadable", text: this.t("image.unreadable") });
    const img = h("img", { ...attrs, src: this.ctx.contentUrl(cell.path), alt: cell.id, draggable: "false" });
    img.addEventListener("error", () => {
      if (this.unreadable.has(cell.id)) return;
      this.unreadable.add(cell.id);
      this.render();
    });
    return img;
  }

  badges(mark) {
    const t = this.t;
    return h("span", { class: "il-badges" },
      mark.status ? h("span", { class: `il-badge il-badge-${mark.status}`, text: t(`mark.${mark.status}`) }) : null,
      mark.starred ? h("span", { class: "il-badge il-badge-star", text: `★ ${t("mark.starred")}` }) : null);
  }

  markButtons(id, mark) {
    const t = this.t;
    const toggle = (status) => () => this.mark(id, { status: mark.status === status ? null : status });
    return h("div", { class: "il-marks" },
      h("button", { type: "button", class: "il-pick", "aria-pressed": String(mark.status === "picked"),
        title: t("mark.pickTitle"), onclick: toggle("picked"), text: t("mark.pick") }),
      h("button", { type: "button", class: "il-reject", "aria-pressed": String(mark.status === "rejected"),
        title: t("mark.rejectTitle"), onclick: toggle("rejected"), text: t("mark.reject") }),
      h("button", { type: "button", class: "il-star", "aria-pressed": String(mark.starred),
        title: t("mark.starTitle"), onclick: () => this.mark(id, { starred: !mark.starred }), text: `★ ${t("mark.star")}` }));
  }

  markOf(id) {
    const mark = this.marks()[id];
    return mark ? { status: mark.status, starred: mark.starred, comment: mark.comment } : { status: null, starred: false, comment: "" };
  }

  detailElement() {
    const id = this.open;
    const found = id ? findImage(this.view, id) : null;
    if (!found) return h("aside", { class: "il-detail", hidden: true });
    const t = this.t;
    const record = found.cell.record || {};
    const mark = this.markOf(id);
    const chain = parentChain(id, this.view.records);
    const none = t("detail.none");
    const field = (key, value) => [h("dt", { text: t(key) }), h("dd", { text: value === null || value === undefined || value === "" ? none : String(value) })];
    const recordPath = `images/${id}.json`;
    return h("aside", { class: "il-detail", "data-image-id": id, "aria-labelledby": "il-detail-title" },
      h("div", { class: "il-detail-head" }, h("h2", { id: "il-detail-title", text: id }),
        h("button", { type: "button", class: "il-close", title: t("detail.close"), text: "×", onclick: () => this.closeDetail() })),
      found.cell.path ? this.picture(found.cell, { class: "il-large" }) : null,
      this.badges(mark),
      found.cell.record ? h("dl", { class: "il-record" },
        field("detail.prompt", promptOf(this.view, id)),
        record.revised_prompt ? field("detail.revised", record.revised_prompt) : null,
        field("detail.row", found.row.unlisted ? null : found.row.title || found.row.id),
        field("detail.model", record.model), field("detail.provider", record.provider),
        field("detail.size", record.size), field("detail.seed", record.seed),
        [h("dt", { text: t("detail.parents") }), h("dd", { class: "il-chain" }, chain.length
          ? chain.map((parent) => h("button", { type: "button", class: "il-parent", text: parent, onclick: () => this.choose(parent) }))
          : none)],
        field("detail.created", record.created))
        : h("p", { class: "il-problem", text: t("detail.noRecord", { path: recordPath }) }),
      this.readOnly ? (mark.comment ? h("p", { class: "il-comment", text: mark.comment }) : null) : this.commentBox(id, mark),
      this.readOnly ? null : this.markButtons(id, mark),
      this.readOnly ? null : h("div", { class: "il-ask" },
        h("button", { type: "button", class: "il-vary", title: t("ask.varyTitle"), text: t("ask.vary"), onclick: () => this.ask(id, "vary") }),
        h("button", { type: "button", class: "il-regenerate", title: t("ask.regenerateTitle"), text: t("ask.regenerate"), onclick: () => this.ask(id, "regenerate") })));
  }

  commentBox(id, mark) {
    const t = this.t;
    const box = h("textarea", { class: "il-comment-input", rows: "3", placeholder: t("mark.commentPlaceholder"), "aria-label": t("mark.commentLabel") });
    box.value = mark.comment;
    const save = () => {
      if (box.value !== this.markOf(id).comment) this.mark(id, { comment: box.value.trim() });
    };
    box.addEventListener("keydown", (event) => {
      if (event.key === "Enter" && (event.ctrlKey || event.metaKey)) {
        event.preventDefault();
        save();
      }
    });
    return h("div", { class: "il-comment-box" },
      h("label", {}, h("span", { text: t("mark.commentLabel") }), box),
      h("button", { type: "button", class: "il-save-comment", text: t("mark.save"), onclick: save }));
  }

  // --- the person's acts ---------------------------------------------------------------

  /** A click on an image: select it (context for the agent) and open it large. */
  choose(id, { auto = false } = {}) {
    this.open = id;
    this.select(id, auto);
    this.render();
    this.element.querySelector(`.il-card[data-image-id="${CSS.escape(id)}"]`)?.scrollIntoView({ block: "nearest" });
  }

  select(id, auto = false) {
    this.selected = id;
    const found = findImage(this.view, id);
    const selection = {
      kind: "image", id, row: found && !found.row.unlisted ? found.row.id : null,
      file: found?.cell.path || `images/${id}`, prompt: promptOf(this.view, id).slice(0, 300),
      label: `${id}${found && !found.row.unlisted ? ` · ${found.row.title || found.row.id}` : ""}`,
    };
    if (auto) selection.auto = true; // a mark, not a click: a chip, never a review pin
    this.ctx.setSelection(selection);
  }

  async mark(id, fields) {
    if (!this.writer) return;
    if (this.selected !== id) this.select(id, true);
    const pending = this.writer.set(id, fields, this.files);
    this.render();
    const answer = await pending;
    this.notice = answer.ok ? "" : this.t("mark.failed", { message: answer.message });
    this.render();
  }

  ask(id, kind) {
    const found = findImage(this.view, id);
    const row = found && !found.row.unlisted ? found.row.id : "";
    this.select(id, true);
    const where = row ? ` in row "${row}"` : "";
    const message = kind === "vary"
      ? `Vary image ${id}${where}: make two variants with vary_image (id "${id}", n 2), keeping what I marked and following my comment on it.`
      : `Regenerate image ${id}${where}: call vary_image with id "${id}" and same_seed true.`;
    this.ctx.sendMessage(message);
  }

  closeDetail() {
    this.open = null;
    this.render();
  }

  clearSelection() {
    this.selected = null;
    this.render();
  }

  // --- the agent's actions -------------------------------------------------------------

  async runAction(actionId, params = {}) {
    if (actionId === "navigate-to") return this.navigate(params);
    if (actionId === "describe-view") return { success: true, data: describeView(this) };
    if (actionId === "get-choices") return { success: true, data: getChoices(this) };
    return { success: false, message: `'${actionId}' is not supported by the illustrate viewer` };
  }

  async navigate({ row, image } = {}) {
    if (!row && !image) return { success: false, message: "navigate-to needs a row or an image id" };
    const deadline = Date.now() + NAV_WAIT_MS;
    // The tool writes the image, its record, then board.json: wait for the image on its row.
    const onRow = (found) => Boolean(found?.cell.path && !found.row.unlisted);
    const ready = () => (image ? onRow(findImage(this.view, image)) : this.view.rows.some((r) => r.id === row));
    while (!ready() && Date.now() < deadline) await this.nextUpdate(deadline - Date.now());
    if (image) {
      const found = findImage(this.view, image);
      if (!found) return { success: false, message: `no image "${image}" on the board or in images/` };
      this.open = image;
      this.render();
      this.element.querySelector(`.il-card[data-image-id="${CSS.escape(image)}"]`)?.scrollIntoView({ block: "center" });
      const missing = found.cell.path ? "" : " (its image file is missing)";
      return { success: true, message: `showing image ${image}${missing}`, data: { image, row: found.row.unlisted ? null : found.row.id } };
    }
    const section = this.element.querySelector(`.il-row[data-row-id="${CSS.escape(row)}"]`);
    if (!section) return { success: false, message: `no row "${row}" in board.json` };
    section.scrollIntoView({ block: "start" });
    const images = findRow(this.view, row).images.map((c) => c.id);
    return { success: true, message: `showing row ${row} (${images.length} images)`, data: { row, images } };
  }

  destroy() {
    if (live === this) live = null;
    this.stopLocale?.();
    this.element.replaceChildren();
    stylesheet.release();
  }
}

function imageIdOf(path) {
  const m = /^images\/([^/]+)\.[^./]+$/.exec(path || "");
  return m ? m[1] : null;
}

function findRow(view, id) {
  return view.rows.find((r) => r.id === id);
}

Object.assign(IllustrateViewer.prototype, pinMethods, titleMethods, followMethods);

function markWords(mark) {
  const words = [mark.status, mark.starred ? "starred" : null].filter(Boolean);
  if (mark.comment) words.push(`comment "${mark.comment}"`);
  return words.join(", ");
}

export function extractContext(selection, files) {
  const sel = selection || {};
  const head = [`mode="${MODE}"`];
  const body = [];
  if (sel.kind === "image" && sel.id) {
    head.push(`image="${attr(sel.id)}"`);
    if (sel.row) head.push(`row="${attr(sel.row)}"`);
    if (sel.file) head.push(`file="${attr(sel.file)}"`);
    if (sel.prompt) body.push(`prompt: ${text(sel.prompt)}`);
    const mark = readChoices(files).choices[sel.id];
    if (mark && !isBlank(mark)) body.push(`marks: ${text(markWords(mark))}`);
  }
  const pending = live ? live.takePending() : [];
  if (pending.length) {
    body.push("Marks the person made in the page since your last turn (saved in choices.json):");
    for (const change of pending) body.push(`- ${text(change.line)}`);
  }
  return `<viewer-context ${head.join(" ")}>${body.join("\n")}</viewer-context>`;
}

/** The rows as workspace items (the shell's navigator). */
export function resolveItems(files) {
  return layout(files).rows.filter((r) => !r.unlisted).map((row, index) => ({
    path: "board.json", label: row.title || row.id, index, metadata: { row: row.id, images: row.images.length },
  }));
}

export default {
  async mount(element, ctx) {
    await stylesheet.acquire();
    const viewer = new IllustrateViewer(element, ctx);
    if (!ctx.readOnly) live = viewer;
    return viewer;
  },
  extractContext,
  resolveItems,
  capabilities: ["annotate", "edit", "follow"],
};
