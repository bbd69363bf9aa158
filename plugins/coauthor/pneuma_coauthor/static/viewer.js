// The CoAuthor viewer: the task billboard, a task's plan, thread and patches
// (side by side, with Accept / Reject), the outline rendered, and the paper's
// .tex files with line numbers where selecting lines points the agent at them.
//
// Implements the viewer contract (docs/viewer-contract.md). Tasks and patches
// come from the plugin's routes (/api/coauthor/…, pneuma_coauthor/routes.py),
// which call the same use cases as `pneuma coauthor`; every new event on the
// billboard arrives on the session's socket as a mode event ("billboard_event",
// broadcast by routes.py), and the viewer reloads what it touches.

import { fetchJson, sharedStylesheet } from "/static/lib/viewer-helpers.js";
import { translator } from "./i18n.js";
import { panels } from "./panels.js";
import { pins } from "./pins.js";
import {
  STATUS_LABEL, attr, baseName, esc, latexLine, lineLabel, paperFiles, renderInline, renderMarkdown,
} from "./text.js";

const MODE = "coauthor";
const CSS_URL = new URL("./viewer.css", import.meta.url).href;
const API = "/api/coauthor";
const EVENT_NAME = "billboard_event";
const NAV_WAIT_MS = 2500; // navigate-to waits this long for a file still being written
const MAX_CONTEXT_CHARS = 4000;

const AGENT_WORDS = translator(() => "en"); // action results are read by the agent: English

// --- small helpers ---------------------------------------------------------------

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

const stylesheet = sharedStylesheet(CSS_URL);

// --- the viewer context -------------------------------------------------------------------

function contextLines(selection, files) {
  const file = (files || []).find((f) => f.path === selection.file);
  const [a, b] = selection.lines;
  if (file && typeof file.content === "string") {
    return file.content.split("\n").slice(a - 1, b).join("\n");
  }
  return selection.text || "";
}

export function extractContext(selection, files) {
  if (!selection) return null;
  if (selection.taskId && !selection.file) {
    const patch = selection.patchId ? ` patch="${attr(selection.patchId)}"` : "";
    return `<viewer-context mode="${MODE}" task="${attr(selection.taskId)}"${patch}>${esc(selection.text || "")}</viewer-context>`;
  }
  const [a, b] = selection.lines || [];
  const lines = a ? ` lines="${a === b ? a : `${a}-${b}`}"` : "";
  const task = selection.taskId ? ` task="${attr(selection.taskId)}"` : "";
  let text = a ? contextLines(selection, files) : selection.text || "";
  if (text.length > MAX_CONTEXT_CHARS) text = `${text.slice(0, MAX_CONTEXT_CHARS)}\n…`;
  text = text.replace(/<\/viewer-context/gi, "&lt;/viewer-context");
  return `<viewer-context mode="${MODE}" file="${attr(selection.file)}"${lines}${task}>\n${text}\n</viewer-context>`;
}

export function resolveItems(files) {
  return paperFiles(files).map((f, index) => ({ path: f.path, label: f.path, index, metadata: {} }));
}

// --- the viewer -----------------------------------------------------------------------

class CoAuthorViewer {
  constructor(element, ctx) {
    this.ctx = ctx;
    this.t = translator(() => ctx.locale || "en");
    this.root = document.createElement("div");
    this.root.className = "ca-root";
    this.root.innerHTML = `
      <aside class="ca-side"></aside>
      <section class="ca-main">
        <header class="ca-head"></header>
        <div class="ca-notice" hidden></div>
        <div class="ca-body" tabindex="-1"></div>
      </section>`;
    element.appendChild(this.root);
    this.side = this.root.querySelector(".ca-side");
    this.head = this.root.querySelector(".ca-head");
    this.noticeEl = this.root.querySelector(".ca-notice");
    this.body = this.root.querySelector(".ca-body");
    this.side.setAttribute("aria-label", this.t("nav.label"));
    this.state = {
      view: "board", file: null, source: false,
      taskId: null, patchId: null, detail: null,
      tasks: [], lastSeq: 0, user: "",
      sel: null, anchorLine: null,
      forms: {}, // open forms and their text: {reject: "…", feedback: "…", newTask: "…"}
      busy: false,
    };
    this.abort = new AbortController();
    this.destroyed = false;
    this.incoming = []; // billboard events not yet shown
    this.pins = []; // the shell's review pins (showPins, pins.js)
    this.refreshing = false;
    this.onClick = (e) => this.click(e);
    this.onInput = (e) => {
      const field = e.target.dataset && e.target.dataset.field;
      if (field) this.state.forms[field] = e.target.value;
    };
    this.onKey = (e) => this.key(e);
    this.onMouseDown = (e) => this.mouseDown(e);
    this.onMouseUp = (e) => this.mouseUp(e);
    this.onMouseOver = (e) => this.mouseOver(e);
    this.onDblClick = (e) => this.selectParagraph(e);
    this.root.addEventListener("click", this.onClick);
    this.root.addEventListener("input", this.onInput);
    this.root.addEventListener("keydown", this.onKey);
    this.root.addEventListener("mousedown", this.onMouseDown);
    this.root.addEventListener("mouseover", this.onMouseOver);
    this.root.addEventListener("dblclick", this.onDblClick);
    document.addEventListener("mouseup", this.onMouseUp);
    // A switch of the page's language: everything is drawn again from state.
    this.stopLocale = ctx.onLocaleChange ? ctx.onLocaleChange(() => this.relabel()) : null;
  }

  relabel() {
    if (this.destroyed) return;
    this.side.setAttribute("aria-label", this.t("nav.label"));
    if (this.noticeText) this.noticeEl.textContent = this.noticeText();
    const sel = this.state.sel;
    if (sel) this.setLines(sel.file, sel.lines[0], sel.lines[1]);
    this.render();
  }

  async start() {
    try {
      await this.loadBoard();
    } catch (error) {
      this.notice("bad", () => this.t("notice.readFailed", { message: error.message }));
    }
    this.render();
    return this;
  }

  // -- data ------------------------------------------------------------------------------

  async loadBoard() {
    const board = await fetchJson(`${API}/tasks`, { signal: this.abort.signal });
    this.state.tasks = board.tasks;
    this.state.user = board.user;
    this.setSeq(board.lastSeq);
  }

  async loadTask(taskId) {
    const detail = await fetchJson(`${API}/tasks/${encodeURIComponent(taskId)}`, { signal: this.abort.signal });
    if (this.state.taskId === taskId) this.state.detail = detail;
    return detail;
  }

  setSeq(seq) {
    this.state.lastSeq = seq;
    this.root.dataset.seq = String(seq);
  }

  /** A billboard event from the server (the shell's mode_event). Events
   * that arrive while a refresh runs are shown by the next one, together. */
  onModeEvent(name, data) {
    if (name !== EVENT_NAME || !data || this.destroyed) return;
    this.incoming.push(data);
    if (!this.refreshing) this.showIncoming();
  }

  async showIncoming() {
    this.refreshing = true;
    try {
      while (this.incoming.length && !this.destroyed) {
        const events = this.incoming.splice(0);
        try {
          await this.refresh(events);
        } catch (error) {
          if (this.destroyed || error.name === "AbortError") return;
          this.notice("bad", () => this.t("notice.readFailed", { message: error.message }));
        }
      }
    } finally {
      this.refreshing = false;
    }
  }

  /** New events: reload the board, and the open task if they touch it. */
  async refresh(events) {
    await this.loadBoard();
    const s = this.state;
    if (s.view === "task" && s.taskId) {
      const files = new Set(Object.values((s.detail && s.detail.patches) || {}).flatMap((p) => p.files.map((f) => f.path)));
      const touches = !events || events.some((e) => e.taskId === s.taskId || (e.type === "ArtifactChanged" && files.has(e.payload.path)));
      if (touches) await this.loadTask(s.taskId).catch(() => {});
    }
    this.render();
  }

  // -- rendering --------------------------------------------------------------------------

  /** `text` is a string (a message from elsewhere) or a function giving
   * ours, so that a switch of language can say it again. */
  notice(kind, text) {
    this.noticeText = typeof text === "function" ? text : null;
    const shown = typeof text === "function" ? text() : text;
    this.noticeEl.hidden = !shown;
    this.noticeEl.className = `ca-notice ca-notice-${kind}`;
    this.noticeEl.textContent = shown || "";
  }

  render() {
    if (this.destroyed) return;
    const s = this.state;
    this.root.dataset.view = s.view;
    this.root.dataset.task = s.view === "task" ? s.taskId || "" : "";
    this.root.dataset.file = s.view === "file" ? s.file || "" : "";
    this.renderSide();
    // Keep the reader's place and the field they type in across re-renders.
    const scroll = this.body.scrollTop;
    const focused = document.activeElement && this.root.contains(document.activeElement) ? document.activeElement.dataset.field : null;
    const caret = focused ? [document.activeElement.selectionStart, document.activeElement.selectionEnd] : null;
    const key = `${s.view}|${s.taskId}|${s.patchId}|${s.file}|${s.source}`;
    if (s.view === "task") this.renderTask();
    else if (s.view === "file") this.renderFile();
    else this.renderBoard();
    if (key === this.lastKey) this.body.scrollTop = scroll;
    this.lastKey = key;
    if (focused) {
      const field = this.root.querySelector(`[data-field="${focused}"]`);
      if (field) {
        field.focus();
        try { field.setSelectionRange(caret[0], caret[1]); } catch { /* not a text field */ }
      }
    }
  }


  renderFile() {
    this.renderFileBody();
    this.paintPins();
  }

  renderFileBody() {
    const s = this.state;
    const t = this.t;
    const file = (this.ctx.files || []).find((f) => f.path === s.file);
    const isMd = /\.md$/i.test(s.file || "");
    const selBar = s.sel && s.sel.file === s.file
      ? `<span class="ca-sel-label">${esc(t("file.selected", { lines: lineLabel(t, s.sel.lines[0], s.sel.lines[1]) }))}</span>
         ${s.forms.newTask === undefined ? `<button class="ca-btn ca-btn-primary" data-act="new-task">${esc(t("file.newTaskHere"))}</button>` : ""}`
      : `<span class="ca-head-meta ca-hint">${esc(t("file.selectHint"))}</span>`;
    this.head.innerHTML = `
      <h2 class="ca-title ca-title-file">${esc(s.file)}</h2>
      ${isMd ? `<button class="ca-btn ca-btn-ghost" data-act="toggle-source">${esc(s.source ? t("file.rendered") : t("file.source"))}</button>` : ""}
      <span class="ca-spacer"></span>
      ${!isMd || s.source ? selBar : ""}`;
    if (!file) {
      this.body.innerHTML = `<div class="ca-empty">${esc(t("file.missing", { file: s.file }))}</div>`;
      return;
    }
    const form = s.forms.newTask !== undefined && s.sel && s.sel.file === s.file ? this.newTaskForm(s.sel) : "";
    if (isMd && !s.source) {
      this.body.innerHTML = `<article class="ca-md">${renderMarkdown(file.content)}</article>`;
      return;
    }
    const markers = this.lineMarkers(s.file);
    const lines = String(file.content ?? "").split("\n");
    if (lines.length > 1 && lines[lines.length - 1] === "") lines.pop();
    const [a, b] = s.sel && s.sel.file === s.file ? s.sel.lines : [0, -1];
    const tex = /\.(tex|bib|sty|cls)$/i.test(s.file);
    const rows = lines.map((line, i) => {
      const n = i + 1;
      const m = markers.get(n);
      const cls = `ca-line${n >= a && n <= b ? " ca-sel" : ""}${m ? " ca-reffed" : ""}`;
      const mk = m ? `<span class="ca-mk" data-act="open-task" data-task="${attr(m[0])}" title="${attr(m.join(", "))}"></span>` : '<span class="ca-mk"></span>';
      return `<div class="${cls}" data-line="${n}">${mk}<span class="ca-ln">${n}</span><span class="ca-tx">${tex ? latexLine(line) : esc(line)}\n</span></div>`;
    }).join("");
    this.body.innerHTML = `${form}<div class="ca-code" data-path="${attr(s.file)}">${rows}</div>`;
  }

  /** line -> ids of the unfinished tasks whose artifactRefs cover it. */
  lineMarkers(path) {
    const out = new Map();
    for (const t of this.state.tasks) {
      if (["done", "canceled"].includes(t.status)) continue;
      for (const r of t.artifactRefs || []) {
        if (r.path !== path || !r.range) continue;
        for (let n = r.range.lineStart; n <= r.range.lineEnd; n += 1) {
          if (!out.has(n)) out.set(n, []);
          out.get(n).push(t.taskId);
        }
      }
    }
    return out;
  }

  // -- navigation --------------------------------------------------------------------------

  showBoard() {
    this.state.view = "board";
    this.state.forms = {};
    this.notice("", "");
    this.render();
  }

  async showTask(taskId, patchId = null) {
    const s = this.state;
    if (s.view !== "task" || s.taskId !== taskId) s.forms = {};
    s.view = "task";
    s.taskId = taskId;
    s.patchId = patchId;
    this.notice("", "");
    this.render();
    const detail = await this.loadTask(taskId);
    this.render();
    if (patchId) this.body.querySelector(".ca-patch")?.scrollIntoView({ block: "start" });
    return detail;
  }

  showFile(path, line = null) {
    const s = this.state;
    if (s.view !== "file" || s.file !== path) {
      s.forms = {};
      s.source = false;
    }
    s.view = "file";
    s.file = path;
    if (line && /\.md$/i.test(path)) s.source = false;
    this.notice("", "");
    this.ctx.setActiveFile(path);
    this.render();
    if (line) {
      const target = /\.md$/i.test(path) && !s.source ? this.mdBlockAt(line) : this.body.querySelector(`.ca-line[data-line="${line}"]`);
      if (target) {
        target.scrollIntoView({ block: "center" });
        target.classList.add("ca-flash");
        setTimeout(() => target.classList.remove("ca-flash"), 1600);
      }
    } else {
      this.body.scrollTop = 0;
    }
  }

  mdBlockAt(line) {
    let best = null;
    for (const el of this.body.querySelectorAll("[data-line]")) {
      if (Number(el.dataset.line) <= line) best = el;
    }
    return best;
  }

  openLabel(label) {
    for (const f of paperFiles(this.ctx.files)) {
      if (!f.path.endsWith(".tex")) continue;
      const lines = String(f.content || "").split("\n");
      const i = lines.findIndex((l) => l.includes(`\\label{${label}}`));
      if (i >= 0) return this.showFile(f.path, i + 1);
    }
    this.notice("warn", () => this.t("file.noLabel", { label }));
  }

  // -- selection -------------------------------------------------------------------------------

  setLines(file, a, b) {
    const [start, end] = a <= b ? [a, b] : [b, a];
    const file_ = (this.ctx.files || []).find((f) => f.path === file);
    const text = file_ ? String(file_.content || "").split("\n").slice(start - 1, end).join("\n") : "";
    const first = text.split("\n").find((l) => l.trim()) || "";
    this.state.sel = { file, lines: [start, end] };
    this.ctx.setSelection({
      file,
      lines: [start, end],
      text: text.slice(0, MAX_CONTEXT_CHARS),
      label: `${baseName(file)} · ${lineLabel(this.t, start, end)} “${first.trim().slice(0, 40)}${first.trim().length > 40 ? "…" : ""}”`,
    });
    this.paintSelection();
    this.renderHeadOnly();
  }

  paintSelection() {
    const sel = this.state.sel;
    for (const el of this.body.querySelectorAll(".ca-line")) {
      const n = Number(el.dataset.line);
      el.classList.toggle("ca-sel", !!sel && sel.file === this.state.file && n >= sel.lines[0] && n <= sel.lines[1]);
    }
  }

  renderHeadOnly() {
    // The header carries the "n lines selected" bar; the code stays as it is.
    if (this.state.view !== "file") return;
    const scroll = this.body.scrollTop;
    const form = this.body.querySelector(".ca-form-new");
    if (form && this.state.forms.newTask === undefined) form.remove();
    const s = this.state;
    const isMd = /\.md$/i.test(s.file || "");
    if (!isMd || s.source) {
      this.renderFile();
      this.body.scrollTop = scroll;
    }
  }

  clearSelection() {
    this.state.sel = null;
    delete this.state.forms.newTask;
    if (this.state.view === "file") {
      const scroll = this.body.scrollTop;
      this.renderFile();
      this.body.scrollTop = scroll;
    }
  }

  mouseDown(e) {
    const ln = e.target.closest && e.target.closest(".ca-ln");
    if (!ln || e.button !== 0) return;
    const line = Number(ln.parentElement.dataset.line);
    e.preventDefault(); // a gutter drag selects lines, not text
    window.getSelection()?.removeAllRanges();
    const s = this.state;
    if (e.shiftKey && s.sel && s.sel.file === s.file) {
      this.drag = { from: s.anchorLine ?? s.sel.lines[0], to: line };
    } else {
      s.anchorLine = line;
      this.drag = { from: line, to: line };
    }
    this.previewDrag();
  }

  mouseOver(e) {
    if (!this.drag) return;
    const row = e.target.closest && e.target.closest(".ca-line");
    if (!row) return;
    this.drag.to = Number(row.dataset.line);
    this.previewDrag();
  }

  previewDrag() {
    const [a, b] = this.drag.from <= this.drag.to ? [this.drag.from, this.drag.to] : [this.drag.to, this.drag.from];
    for (const el of this.body.querySelectorAll(".ca-line")) {
      const n = Number(el.dataset.line);
      el.classList.toggle("ca-sel", n >= a && n <= b);
    }
  }

  mouseUp(e) {
    if (this.state.view !== "file") {
      this.drag = null;
      return;
    }
    // The second press of a double-click: the dblclick selects the paragraph.
    if (e && e.detail === 2 && !this.drag) return;
    if (this.drag) {
      const { from, to } = this.drag;
      this.drag = null;
      // A double-click on the gutter selects the line once (each selection may become a pin).
      if (e && e.detail > 1) return;
      this.setLines(this.state.file, from, to);
      return;
    }
    // A text selection inside the code: the lines it spans.
    const sel = window.getSelection();
    if (!sel || sel.isCollapsed || !sel.rangeCount) return;
    const code = this.body.querySelector(".ca-code");
    if (!code) return;
    const lineOf = (node) => {
      const el = node && (node.nodeType === 1 ? node : node.parentElement);
      const row = el && el.closest(".ca-line");
      return row && code.contains(row) ? Number(row.dataset.line) : null;
    };
    const range = sel.getRangeAt(0);
    let a = lineOf(range.startContainer);
    let b = lineOf(range.endContainer);
    if (a == null && b == null) return;
    a ??= 1;
    b ??= a;
    // A selection ending at the very start of the next line does not include it.
    if (b > a && range.endOffset === 0 && range.endContainer.nodeType === 3) b -= 1;
    this.state.anchorLine = a;
    this.setLines(this.state.file, a, b);
  }

  // -- clicks and forms ----------------------------------------------------------------------------

  key(e) {
    if ((e.key === "Enter" || e.key === " ") && e.target.classList && e.target.classList.contains("ca-card")) {
      e.preventDefault();
      this.showTask(e.target.dataset.task).catch((err) => this.notice("bad", err.message));
      return;
    }
    if (e.key === "Enter" && (e.metaKey || e.ctrlKey) && e.target.dataset && e.target.dataset.field) {
      e.preventDefault();
      e.target.closest("form")?.querySelector('[type="submit"]')?.click();
      return;
    }
    if (e.key === "Escape" && e.target.dataset && e.target.dataset.field) {
      e.preventDefault(); // ours, not the shell's interrupt
      delete this.state.forms[e.target.dataset.field];
      this.render();
    }
  }

  click(e) {
    const el = e.target.closest("[data-act]");
    if (!el || !this.root.contains(el)) return;
    const act = el.dataset.act;
    e.preventDefault();
    const fail = (error) => this.notice("bad", error.message || String(error));
    switch (act) {
      case "board": this.showBoard(); break;
      case "open-task": this.showTask(el.dataset.task).catch(fail); break;
      case "select-patch": this.state.patchId = el.dataset.patch; this.state.forms = {}; this.render(); break;
      case "open-file": this.showFile(el.dataset.path, Number(el.dataset.line) || null); break;
      case "open-label": this.openLabel(el.dataset.label); break;
      case "toggle-source": this.state.source = !this.state.source; this.render(); break;
      case "new-task": this.state.forms.newTask = this.state.forms.newTask || ""; this.render(); this.focusField("newTask"); break;
      case "open-reject": this.state.forms.reject = ""; this.render(); this.focusField("reject"); break;
      case "open-feedback": this.state.forms.feedback = ""; this.render(); this.focusField("feedback"); break;
      case "cancel-form": delete this.state.forms[el.dataset.formName]; this.render(); break;
      case "create-task": this.createTask().catch(fail); break;
      case "accept": this.accept(el.dataset.patch).catch(fail); break;
      case "reject": this.reject(el.dataset.patch).catch(fail); break;
      case "feedback": this.feedback("feedback", false).catch(fail); break;
      case "answer": this.feedback("answer", true).catch(fail); break;
      case "cancel-task": this.cancelTask().catch(fail); break;
      default: break;
    }
  }

  focusField(name) {
    const field = this.root.querySelector(`[data-field="${name}"]`);
    if (field) field.focus();
  }

  async createTask() {
    const s = this.state;
    const title = (s.forms.newTask || "").trim();
    if (!title) return this.focusField("newTask");
    const body = { title };
    if (s.view === "file" && s.sel && s.sel.file === s.file) {
      body.file = s.sel.file;
      body.lines = `${s.sel.lines[0]}-${s.sel.lines[1]}`;
    }
    const created = await fetchJson(`${API}/tasks`, { method: "POST", json: body });
    delete s.forms.newTask;
    await this.loadBoard();
    await this.showTask(created.taskId);
    this.notice("ok", () => this.t("notice.created", { task: created.taskId, who: created.task.assignedTo || this.t("notice.nobody") }));
  }

  async accept(patchId) {
    const s = this.state;
    s.busy = true;
    this.render();
    try {
      const r = await fetchJson(`${API}/tasks/${encodeURIComponent(s.taskId)}/accept`, { method: "POST", json: { patchId } });
      if (r.status === "applied") {
        const files = Object.keys(r.revisions).join(", ");
        const build = () => (r.build && r.build.status !== "skipped" ? ` ${this.t("notice.build", { status: r.build.status })}` : "");
        this.notice("ok", () => `${this.t("notice.applied", { patch: r.patchId, files })}${build()}`);
      } else {
        this.notice("warn", () => this.t("notice.notApplied", { patch: r.patchId, reason: r.reason }));
      }
    } finally {
      s.busy = false;
      await this.refresh(null);
    }
  }

  async reject(patchId) {
    const s = this.state;
    const reason = (s.forms.reject || "").trim();
    if (!reason) {
      this.notice("warn", () => this.t("notice.sayWhy"));
      return this.focusField("reject");
    }
    await fetchJson(`${API}/tasks/${encodeURIComponent(s.taskId)}/reject`, { method: "POST", json: { patchId, reason } });
    delete s.forms.reject;
    this.notice("ok", () => this.t("notice.rejected", { patch: patchId }));
    await this.refresh(null);
  }

  async feedback(field, answer) {
    const s = this.state;
    const text = (s.forms[field] || "").trim();
    if (!text) return this.focusField(field);
    await fetchJson(`${API}/tasks/${encodeURIComponent(s.taskId)}/feedback`, { method: "POST", json: { text, answer } });
    delete s.forms[field];
    this.notice("ok", () => this.t(answer ? "notice.answerSent" : "notice.feedbackSent"));
    await this.refresh(null);
  }

  async cancelTask() {
    const s = this.state;
    const ok = await this.ctx.confirm(this.t("confirm.cancel", { task: s.taskId }), { task: [s.detail ? s.detail.task.intent : s.taskId] });
    if (!ok) return;
    await fetchJson(`${API}/tasks/${encodeURIComponent(s.taskId)}/cancel`, { method: "POST", json: { reason: "canceled in the viewer" } });
    const canceled = s.taskId;
    this.notice("ok", () => this.t("notice.canceled", { task: canceled }));
    await this.refresh(null);
  }

  // -- the contract ----------------------------------------------------------------------------------

  update(files, changes) {
    const s = this.state;
    const paths = new Set((changes || []).map((c) => c.path));
    if (s.view === "file" && paths.has(s.file)) {
      const scroll = this.body.scrollTop;
      this.render();
      this.body.scrollTop = scroll;
    } else {
      this.renderSide();
    }
    if (s.view === "task" && s.detail) {
      const touched = Object.values(s.detail.patches).some((p) => p.files.some((f) => paths.has(f.path)));
      if (touched) this.loadTask(s.taskId).then(() => this.render()).catch(() => {});
    }
  }

  async waitForFile(path) {
    const deadline = Date.now() + NAV_WAIT_MS;
    while (Date.now() < deadline) {
      if ((this.ctx.files || []).some((f) => f.path === path)) return true;
      await sleep(100);
    }
    return (this.ctx.files || []).some((f) => f.path === path);
  }

  visibleLines() {
    const box = this.body.getBoundingClientRect();
    let first = null;
    let last = null;
    for (const el of this.body.querySelectorAll(".ca-line")) {
      const r = el.getBoundingClientRect();
      if (r.bottom > box.top && r.top < box.bottom) {
        const n = Number(el.dataset.line);
        first ??= n;
        last = n;
      } else if (first != null) break;
    }
    return first == null ? null : [first, last];
  }

  async runAction(actionId, params = {}) {
    const s = this.state;
    switch (actionId) {
      case "navigate-to": {
        const file = String(params.file || "").replace(/^\.\//, "");
        if (!file) return { success: false, message: "navigate-to needs a file" };
        if (!(await this.waitForFile(file))) {
          return { success: false, message: `${file} is not among the files the viewer shows (.tex, .bib, OUTLINE.md, BRIEF.md, STYLE.md)` };
        }
        const line = params.line ? Math.max(1, Math.floor(Number(params.line))) : null;
        this.showFile(file, line);
        return { success: true, message: `Showing ${file}${line ? ` at line ${line}` : ""}`, data: { file, line } };
      }
      case "show-task": {
        const taskId = String(params.taskId || "");
        if (!taskId) return { success: false, message: "show-task needs a taskId" };
        try {
          await this.loadBoard();
          if (!this.state.tasks.some((t) => t.taskId === taskId)) {
            return { success: false, message: `no task ${taskId} on the billboard` };
          }
          const d = await this.showTask(taskId);
          return { success: true, message: `Showing ${taskId} (${d.task.status})`, data: { taskId, status: d.task.status, currentPatchId: d.currentPatchId } };
        } catch (error) {
          this.showBoard();
          return { success: false, message: error.message };
        }
      }
      case "show-patch": {
        const patchId = String(params.patchId || "");
        if (!patchId) return { success: false, message: "show-patch needs a patchId" };
        await this.loadBoard();
        if (!this.state.tasks.some((t) => t.proposals && t.proposals[patchId])) {
          return { success: false, message: `no patch ${patchId} on the billboard (patch ids look like t-003-p1)` };
        }
        let patch;
        try {
          patch = await fetchJson(`${API}/patches/${encodeURIComponent(patchId)}`);
        } catch (error) {
          return { success: false, message: error.message };
        }
        await this.showTask(patch.taskId, patchId);
        return {
          success: true,
          message: `Showing ${patchId} (${patch.state}) of ${patch.taskId} side by side${patch.state === "proposed" ? "; the person can accept or reject it" : ""}`,
          data: { taskId: patch.taskId, patchId, state: patch.state, files: patch.files.map((f) => f.path), drifted: patch.files.filter((f) => f.drifted).map((f) => f.path) },
        };
      }
      case "describe-view": {
        const data = { view: s.view === "file" && /\.md$/i.test(s.file || "") && !s.source ? "document" : s.view };
        let message;
        if (s.view === "file") {
          data.file = s.file;
          const visible = this.visibleLines();
          if (visible) data.visibleLines = visible;
          message = `Viewing ${s.file}${visible ? ` (lines ${visible[0]}–${visible[1]} visible)` : ""}`;
        } else if (s.view === "task" && s.detail) {
          const t = s.detail.task;
          const patchId = s.patchId && s.detail.patches[s.patchId] ? s.patchId : s.detail.currentPatchId;
          Object.assign(data, { taskId: t.taskId, status: t.status, intent: t.intent, patchId: patchId || null });
          message = `Viewing task ${t.taskId} (${t.status})${patchId ? `, patch ${patchId}` : ""}`;
        } else {
          const counts = {};
          for (const t of s.tasks) counts[t.status] = (counts[t.status] || 0) + 1;
          data.counts = counts;
          message = `Viewing the task board: ${Object.entries(counts).map(([k, v]) => `${v} ${STATUS_LABEL[k] || k}`).join(", ") || "no tasks"}`;
        }
        if (s.sel) {
          data.selection = { file: s.sel.file, lines: s.sel.lines };
          message += `; selected ${s.sel.file} ${lineLabel(AGENT_WORDS, s.sel.lines[0], s.sel.lines[1])}`;
        }
        return { success: true, message, data };
      }
      default:
        return { success: false, message: `'${actionId}' is not supported by the CoAuthor viewer` };
    }
  }

  destroy() {
    this.destroyed = true;
    if (this.stopLocale) this.stopLocale();
    this.abort.abort();
    document.removeEventListener("mouseup", this.onMouseUp);
    this.root.remove();
    stylesheet.release();
  }
}

Object.assign(CoAuthorViewer.prototype, panels, pins);

export default {
  capabilities: ["annotate", "follow"],

  async mount(element, ctx) {
    await stylesheet.acquire();
    return new CoAuthorViewer(element, ctx).start();
  },
  extractContext,
  resolveItems,
};
