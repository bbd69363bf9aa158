// The webgal mode's viewer (see docs/viewer-contract.md).
//
// Left: the scenes of game/scene/ (and config.txt). Right: the running game
// (the real WebGAL engine, run on a site of its own because the game is
// workspace content, framed by the server's /webgal/ page) above the script of the open scene, with line numbers and the
// diagnostics of the validate_script tool. Clicking a line selects it and
// jumps the game there; shift-click or a drag selects a range of lines, which
// becomes the <viewer-context> of the person's next message.
//
// Jumps go through the server (POST /api/webgal/jump → the editor-sync socket
// every running game keeps open); re-syncing after an edit goes straight to
// this viewer's own frame (window.pneumaWebgal of the /webgal/ page, set up
// by bridge.js, which speaks postMessage with the engine's launcher.js; this
// viewer never touches the engine's page itself).

import { h } from "/static/lib/viewer-helpers.js";
import { translator } from "./i18n.js";
import { linesText, markPins } from "./pins.js";

const MODE = "webgal";
const CSS_URL = new URL("./viewer.css", import.meta.url).href;
const SCENE_DIR = "game/scene/";
const CONFIG_FILE = "game/config.txt";
const MAX_CONTEXT_LINES = 40;
const VALIDATE_DEBOUNCE_MS = 350;
const RESYNC_DEBOUNCE_MS = 700;
const JUMP_WAIT_S = 15;
// Files whose change needs the game to start over (the engine reads them once).
const RELOAD_FILES = /^game\/(config\.txt|userStyleSheet\.css|animation\/|template\/|background\/|figure\/|bgm\/|vocal\/|video\/|tex\/)/;

// The 34 keywords WebGAL engine 4.5.18 registers (its script parser's command list).
const COMMANDS = new Set(("say changeBg changeFigure bgm playVideo pixiPerform pixiInit intro miniAvatar changeScene " +
  "choose end setComplexAnimation setFilter label jumpLabel setVar callScene showVars unlockCg unlockBgm filmMode " +
  "setTextbox setAnimation playEffect setTempAnimation setTransform setTransition getUserInput applyStyle wait callSteam").split(" "));

// --- small helpers ---------------------------------------------------------------

// The server has no such route (rather than a route that answered "not
// found"): its 404 says so in details.reason.
function noRoute(data) {
  return Boolean(data && data.error && data.error.details && data.error.details.reason === "no_route");
}

function attr(value) {
  return String(value).replaceAll("&", "&amp;").replaceAll('"', "&quot;").replaceAll("<", "&lt;");
}

function splitLines(text) {
  return String(text ?? "").replace(/^\uFEFF/, "").replace(/\r/g, "").split("\n");
}

function sceneName(path) {
  return path.startsWith(SCENE_DIR) ? path.slice(SCENE_DIR.length) : path;
}

function isScene(path) {
  return path.startsWith(SCENE_DIR) && path.endsWith(".txt");
}

/** "station_en", "station_en.txt", "game/scene/station_en.txt" → the workspace path. */
function scenePath(scene) {
  let name = String(scene || "").trim().replace(/\\/g, "/").replace(/^\.?\//, "");
  if (name.startsWith(SCENE_DIR)) name = name.slice(SCENE_DIR.length);
  else if (name.startsWith("scene/")) name = name.slice(6);
  if (name && !name.endsWith(".txt")) name += ".txt";
  return SCENE_DIR + name;
}

function sortScenes(paths) {
  // start.txt first (the engine's entry), then by name.
  return [...paths].sort((a, b) => {
    const sa = sceneName(a) === "start.txt" ? 0 : 1;
    const sb = sceneName(b) === "start.txt" ? 0 : 1;
    return sa - sb || a.localeCompare(b, undefined, { numeric: true });
  });
}

function lineRange(selection) {
  if (!selection) return null;
  const start = Math.min(selection.start, selection.end);
  const end = Math.max(selection.start, selection.end);
  return { start, end };
}

function rangeLabel({ start, end }) {
  return start === end ? `${start}` : `${start}-${end}`;
}

/** Split one script line into coloured parts (command / speaker / text / args / comment). */
function highlight(line) {
  const parts = [];
  let statement = line;
  let comment = "";
  const semi = line.search(/(?<!\\);/);
  if (semi >= 0) {
    statement = line.slice(0, semi);
    comment = line.slice(semi);
  }
  if (!statement.trim()) {
    parts.push(["comment", line]);
    return parts;
  }
  const colon = statement.indexOf(":");
  let head = "";
  let rest = statement;
  let headKind = null;
  if (colon >= 0) {
    head = statement.slice(0, colon);
    rest = statement.slice(colon + 1);
    headKind = COMMANDS.has(head) ? "cmd" : "speaker";
  } else if (COMMANDS.has(statement)) {
    parts.push(["cmd", statement]);
    if (comment) parts.push(["comment", comment]);
    return parts;
  }
  if (headKind) {
    parts.push([headKind, head]);
    parts.push(["punct", ":"]);
  }
  const args = rest.indexOf(" -");
  if (args >= 0) {
    parts.push(["text", rest.slice(0, args)]);
    parts.push(["args", rest.slice(args)]);
  } else {
    parts.push(["text", rest]);
  }
  if (comment) parts.push(["comment", comment]);
  return parts;
}

let cssUsers = 0;
let cssLink = null;
function acquireCss() {
  cssUsers += 1;
  if (!cssLink) {
    cssLink = h("link", { rel: "stylesheet", href: CSS_URL, "data-pneuma-webgal": "" });
    document.head.append(cssLink);
  }
}
function releaseCss() {
  cssUsers = Math.max(0, cssUsers - 1);
  if (!cssUsers && cssLink) {
    cssLink.remove();
    cssLink = null;
  }
}

async function postJson(url, body) {
  const response = await fetch(url, {
    method: "POST",
    credentials: "same-origin",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify(body),
  });
  let data = null;
  try {
    data = await response.json();
  } catch {
    data = null;
  }
  return { ok: response.ok, status: response.status, data };
}

// --- the module's static parts -----------------------------------------------------

function extractContext(selection, files) {
  if (!selection || !selection.file) return "";
  const range = lineRange(selection);
  const file = (files || []).find((f) => f.path === selection.file);
  const lines = splitLines(file ? file.content : "");
  let open = `<viewer-context mode="${MODE}" file="${attr(selection.file)}"`;
  if (range) open += ` lines="${rangeLabel(range)}"`;
  open += ">";
  if (!range) return `${open}</viewer-context>`;
  const body = [];
  const last = Math.min(range.end, range.start + MAX_CONTEXT_LINES - 1, lines.length);
  for (let n = range.start; n <= last; n += 1) body.push(`${n}: ${lines[n - 1] ?? ""}`);
  if (last < range.end) body.push(`… ${range.end - last} more line(s)`);
  const text = body.join("\n").replaceAll("</viewer-context", "<\\/viewer-context");
  return `${open}\n${text}\n</viewer-context>`;
}

function resolveItems(files) {
  const paths = (files || []).filter((f) => !f.binary && isScene(f.path)).map((f) => f.path);
  const items = sortScenes(paths).map((path, index) => ({ path, label: sceneName(path), index, metadata: { kind: "scene" } }));
  if ((files || []).some((f) => f.path === CONFIG_FILE)) {
    items.push({ path: CONFIG_FILE, label: "config.txt", index: items.length, metadata: { kind: "config" } });
  }
  return items;
}

// --- the viewer instance ----------------------------------------------------------

class WebgalViewer {
  constructor(element, ctx) {
    this.element = element;
    this.ctx = ctx;
    this.t = translator(() => ctx.locale || "en");
    this.statusText = () => this.t("game.starting"); // the game bar's line, said again after a switch of language
    this.file = null; // the workspace path on screen
    this.selection = null; // {file, start, end}
    this.cursor = null; // the line last clicked (jump target)
    this.diagnostics = new Map(); // path -> {valid, diagnostics} | {unavailable}
    this.validateTimers = new Map();
    this.validateAvailable = true;
    this.resyncTimer = null;
    this.reloadPending = false;
    this.frameState = null;
    this.unsubscribe = null;
    this.pins = []; // the review pins the shell shows (showPins)
    acquireCss();
    this.build();
    this.stopLocale = ctx.onLocaleChange ? ctx.onLocaleChange(() => this.relabel()) : null;
    const first = this.scenePaths().find((p) => sceneName(p) === "start.txt") || this.scenePaths()[0] || null;
    if (first) this.open(first, { quiet: true });
    else this.renderScript();
  }

  // -- structure --

  build() {
    this.sceneList = h("nav", { class: "wg-scenes" });
    this.frame = h("iframe", {
      class: "wg-frame",
      src: this.pagePath(),
      allow: "autoplay; fullscreen",
    });
    this.frame.addEventListener("load", () => this.attachFrame());
    this.gameStatus = h("div", { class: "wg-game-status", "aria-live": "polite" });
    this.restartButton = h("button", { type: "button", class: "wg-btn", "data-action": "restart", onclick: () => this.reloadGame(null) });
    this.playButton = h("button", { type: "button", class: "wg-btn", "data-action": "play-scene", onclick: () => this.file && isScene(this.file) && this.jump(sceneName(this.file), 1) });
    this.game = h("section", { class: "wg-game" },
      h("div", { class: "wg-stage" }, this.frame),
      h("div", { class: "wg-game-bar" }, this.gameStatus, h("span", { class: "wg-spacer" }), this.playButton, this.restartButton));
    this.fileTitle = h("span", { class: "wg-file-title" });
    this.validity = h("span", { class: "wg-validity" });
    this.hint = h("span", { class: "wg-hint" });
    this.lines = h("div", { class: "wg-lines", role: "list" });
    this.scriptScroll = h("div", { class: "wg-script-scroll" }, this.lines);
    this.script = h("section", { class: "wg-script" },
      h("header", { class: "wg-script-head" }, this.fileTitle, this.validity, h("span", { class: "wg-spacer" }), this.hint),
      this.scriptScroll);
    this.root = h("div", { class: "wg-root" },
      this.sceneList,
      h("div", { class: "wg-main" }, this.game, this.script));
    this.element.append(this.root);
    this.lines.addEventListener("mouseup", (event) => this.onMouseUp(event));
    this.labelStatic();
    this.renderScenes();
  }

  /** The labels that never change but with the page's language. */
  labelStatic() {
    const t = this.t;
    this.sceneList.setAttribute("aria-label", t("scenes.label"));
    this.frame.title = t("game.frame");
    this.restartButton.textContent = t("game.restart");
    this.restartButton.title = t("game.restartTitle");
    this.playButton.textContent = t("game.play");
    this.playButton.title = t("game.playTitle");
    this.hint.textContent = t("script.hint");
    this.lines.setAttribute("aria-label", t("script.lines"));
    this.showStatus(this.statusText);
  }

  /** `text()` gives the game bar's line; kept so that a switch of language can say it again. */
  showStatus(text, title = false) {
    this.statusText = text;
    this.gameStatus.textContent = text();
    if (title) this.gameStatus.title = this.gameStatus.textContent;
    else this.gameStatus.removeAttribute("title");
  }

  relabel() {
    this.labelStatic();
    this.renderScenes();
    this.renderScript();
    if (this.selection) this.setSelection(this.selection);
  }

  files() {
    return this.ctx.files || [];
  }

  fileContent(path) {
    const f = this.files().find((x) => x.path === path);
    return f && !f.binary ? f.content : null;
  }

  scenePaths() {
    return sortScenes(this.files().filter((f) => !f.binary && isScene(f.path)).map((f) => f.path));
  }

  // -- the scene list --

  renderScenes() {
    const scenes = this.scenePaths();
    const current = this.frameState && this.frameState.scene ? SCENE_DIR + this.frameState.scene : null;
    const item = (path, label, kind) => {
      const diag = this.diagnostics.get(path);
      const problems = diag && Array.isArray(diag.diagnostics) ? diag.diagnostics.length : 0;
      const badge = diag && diag.diagnostics
        ? h("span", { class: `wg-badge ${diag.valid === false ? "bad" : problems ? "warn" : "ok"}`, title: problems === 1 ? this.t("badge.problem") : problems ? this.t("badge.problems", { count: problems }) : this.t("badge.valid") }, problems ? String(problems) : "✓")
        : null;
      return h("button", {
        type: "button",
        class: `wg-scene${path === this.file ? " active" : ""}${path === current ? " playing" : ""}`,
        "data-path": path,
        "data-kind": kind,
        title: path,
        onclick: () => this.open(path),
      }, h("span", { class: "wg-scene-name", text: label }), path === current ? h("span", { class: "wg-playing", title: this.t("scenes.playing"), text: "▶" }) : null, badge);
    };
    const children = [h("div", { class: "wg-list-title", text: this.t("scenes.title") })];
    if (!scenes.length) children.push(h("p", { class: "wg-empty", text: this.t("scenes.none") }));
    for (const path of scenes) children.push(item(path, sceneName(path), "scene"));
    if (this.fileContent(CONFIG_FILE) != null) {
      children.push(h("div", { class: "wg-list-title", text: this.t("scenes.game") }));
      children.push(item(CONFIG_FILE, "config.txt", "config"));
    }
    this.sceneList.replaceChildren(...children);
  }

  // -- the script --

  open(path, { line = null, quiet = false } = {}) {
    const changed = path !== this.file;
    this.file = path;
    if (changed) {
      this.cursor = null;
      if (this.selection && this.selection.file !== path) this.setSelection(null);
    }
    if (line != null) this.cursor = line;
    this.ctx.setActiveFile(path);
    this.renderScenes();
    this.renderScript();
    if (changed && !quiet) this.scriptScroll.scrollTop = 0;
    if (line != null) this.scrollToLine(line);
    if (isScene(path) && !this.diagnostics.has(path)) this.validate(path);
  }

  renderScript() {
    const path = this.file;
    const content = path ? this.fileContent(path) : null;
    this.fileTitle.textContent = path || this.t("script.none");
    if (content == null) {
      this.lines.replaceChildren(h("p", { class: "wg-empty", text: path ? this.t("script.gone", { file: path }) : this.t("script.pick") }));
      this.validity.replaceChildren();
      return;
    }
    const diag = this.diagnostics.get(path);
    const byLine = new Map();
    if (diag && Array.isArray(diag.diagnostics)) {
      for (const d of diag.diagnostics) {
        if (!byLine.has(d.line)) byLine.set(d.line, []);
        byLine.get(d.line).push(d);
      }
    }
    const range = this.selection && this.selection.file === path ? lineRange(this.selection) : null;
    const playing = this.frameState && SCENE_DIR + this.frameState.scene === path ? this.frameState.line : null;
    const rows = splitLines(content).map((text, i) => {
      const n = i + 1;
      const code = h("code", { class: "wg-code" });
      for (const [kind, part] of highlight(text)) code.append(h("span", { class: `t-${kind}`, text: part }));
      if (!text) code.append("\u200b");
      const notes = byLine.get(n) || [];
      const worst = notes.some((d) => d.kind !== "style") ? "bad" : notes.length ? "warn" : "";
      const row = h("div", {
        class: ["wg-line", range && n >= range.start && n <= range.end ? "selected" : "", n === this.cursor ? "cursor" : "", n === playing ? "playing" : "", worst ? `has-${worst}` : ""].filter(Boolean).join(" "),
        "data-line": String(n),
        role: "listitem",
      }, h("span", { class: "wg-gutter", text: String(n) }), code);
      if (notes.length) {
        row.append(h("div", { class: "wg-notes" }, notes.map((d) => h("div", { class: `wg-note kind-${d.kind}` },
          h("span", { class: "wg-note-kind", text: this.t(`kind.${d.kind}`, {}, d.kind) }),
          h("span", { class: "wg-note-msg", text: d.message }),
          d.fixHint ? h("span", { class: "wg-note-hint", text: d.fixHint }) : null))));
      }
      row.addEventListener("click", (event) => this.onLineClick(event, n));
      return row;
    });
    this.lines.replaceChildren(...rows);
    this.renderPins();
    this.renderValidity();
  }

  renderValidity() {
    const diag = this.file ? this.diagnostics.get(this.file) : null;
    let node = null;
    if (!this.file || !isScene(this.file)) node = null;
    else if (!diag) node = h("span", { class: "muted", text: this.t("check.running") });
    else if (diag.unavailable) {
      const reason = diag.notServed ? this.t("check.notServed") : diag.reason || "";
      node = h("span", { class: "muted", title: reason, text: this.t("check.unavailable") });
    } else if (!diag.diagnostics.length) node = h("span", { class: "ok", text: this.t("check.valid") });
    else {
      const n = diag.diagnostics.length;
      const key = diag.valid === false ? (n === 1 ? "check.invalidOne" : "check.invalid") : n === 1 ? "check.warningsOne" : "check.warnings";
      node = h("span", { class: diag.valid === false ? "bad" : "warn", text: this.t(key, { count: n }) });
    }
    this.validity.replaceChildren(...(node ? [node] : []));
  }

  scrollToLine(line) {
    const row = this.lines.querySelector(`.wg-line[data-line="${line}"]`);
    if (row) row.scrollIntoView({ block: "center" });
  }

  markLines() {
    const range = this.selection && this.selection.file === this.file ? lineRange(this.selection) : null;
    const playing = this.frameState && SCENE_DIR + this.frameState.scene === this.file ? this.frameState.line : null;
    for (const row of this.lines.querySelectorAll(".wg-line")) {
      const n = Number(row.dataset.line);
      row.classList.toggle("selected", !!range && n >= range.start && n <= range.end);
      row.classList.toggle("cursor", n === this.cursor);
      row.classList.toggle("playing", n === playing);
    }
  }

  // -- selection and clicks --

  setSelection(selection) {
    this.selection = selection;
    if (!selection) {
      this.ctx.setSelection(null);
    } else {
      const range = lineRange(selection);
      const lines = splitLines(this.fileContent(selection.file) || "");
      const first = (lines[range.start - 1] || "").trim();
      const where = range.start === range.end ? this.t("chip.line", { line: range.start }) : this.t("chip.lines", { start: range.start, end: range.end });
      const snippet = first.length > 40 ? `${first.slice(0, 39)}…` : first;
      this.ctx.setSelection({
        file: selection.file,
        start: range.start,
        end: range.end,
        lines: rangeLabel(range),
        label: `${sceneName(selection.file)} · ${where}${snippet ? ` “${snippet}”` : ""}`,
      });
    }
    this.markLines();
  }

  onLineClick(event, n) {
    const text = window.getSelection && window.getSelection();
    if (text && !text.isCollapsed && this.lines.contains(text.anchorNode)) return; // a drag: handled on mouseup
    if (event.shiftKey && this.selection && this.selection.file === this.file) {
      this.setSelection({ file: this.file, start: this.selection.start, end: n });
      return;
    }
    this.cursor = n;
    this.setSelection({ file: this.file, start: n, end: n });
    if (isScene(this.file)) this.jump(sceneName(this.file), n).catch(() => {});
  }

  onMouseUp() {
    const text = window.getSelection && window.getSelection();
    if (!text || text.isCollapsed || !this.lines.contains(text.anchorNode) || !this.lines.contains(text.focusNode)) return;
    const lineOf = (node) => {
      const el = node.nodeType === 1 ? node : node.parentElement;
      const row = el && el.closest(".wg-line");
      return row ? Number(row.dataset.line) : null;
    };
    const a = lineOf(text.anchorNode);
    const b = lineOf(text.focusNode);
    if (a && b) this.setSelection({ file: this.file, start: Math.min(a, b), end: Math.max(a, b) });
  }

  // -- diagnostics --

  validate(path, delay = 0) {
    if (!isScene(path)) return;
    clearTimeout(this.validateTimers.get(path));
    this.validateTimers.set(path, setTimeout(() => this.runValidate(path), delay));
  }

  async runValidate(path) {
    this.validateTimers.delete(path);
    if (!this.validateAvailable) {
      this.diagnostics.set(path, { unavailable: true, notServed: true, reason: "the validate_script tool is not served" });
      this.afterDiagnostics(path);
      return;
    }
    const content = this.fileContent(path);
    if (content == null) return;
    let result;
    try {
      const { ok, status, data } = await postJson("/api/tools/validate_script", { path });
      if (ok && data && Array.isArray(data.diagnostics)) {
        result = { valid: data.valid !== false, diagnostics: data.diagnostics };
      } else if (status === 404 && noRoute(data)) {
        this.validateAvailable = false; // no tool route on this server
        result = { unavailable: true, notServed: true, reason: "the validate_script tool is not served" };
      } else {
        result = { unavailable: true, reason: (data && data.error && data.error.message) || `HTTP ${status}` };
      }
    } catch (error) {
      result = { unavailable: true, reason: error.message };
    }
    // A newer version may have arrived meanwhile: only keep the answer if not.
    if (this.fileContent(path) !== content) return;
    this.diagnostics.set(path, result);
    this.afterDiagnostics(path);
  }

  afterDiagnostics(path) {
    if (path === this.file) this.renderScript();
    this.renderScenes();
  }

  // -- the game --

  frameApi() {
    try {
      return this.frame.contentWindow && this.frame.contentWindow.pneumaWebgal;
    } catch {
      return null;
    }
  }

  attachFrame() {
    try {
      if (this.unsubscribe) this.unsubscribe();
    } catch {
      // the previous page of the frame is gone
    }
    this.unsubscribe = null;
    const api = this.frameApi();
    if (!api) {
      this.showStatus(() => this.t("game.missing"));
      this.game.classList.add("missing");
      return;
    }
    this.game.classList.remove("missing");
    this.showStatus(() => this.t("game.clickToStart"));
    this.unsubscribe = api.onSync((state) => this.onFrameSync({ ...state }));
  }

  onFrameSync(state) {
    const before = this.frameState;
    this.frameState = state;
    if (state.scene) {
      const who = state.speaker ? `${state.speaker}: ` : "";
      const said = state.text ? ` — ${who}${state.text}` : "";
      this.showStatus(() => `${this.t("game.at", { scene: state.scene, line: state.line })}${said}`, true);
    }
    if (!before || before.scene !== state.scene) this.renderScenes();
    if (!before || before.scene !== state.scene || before.line !== state.line) this.markLines();
  }

  /** The preview page: the game now, or a checkpoint's (ctx.snapshot: Compare, the timeline). */
  pagePath() {
    const snap = this.ctx.snapshot;
    return snap ? `/webgal/?snapshot=${encodeURIComponent(snap.ref)}/${encodeURIComponent(snap.side)}` : "/webgal/";
  }

  /** Jump every running game (this frame included) via the server; a snapshot's only its own. */
  async jump(scene, line = 1, { wait = 0, dedupe = false } = {}) {
    this.cursor = line;
    this.markLines();
    const own = this.ctx.snapshot && this.frameApi();
    if (own) {
      own.jump(scene, line);
      return { scene, line, delivered: 1, landed: false, local: true };
    }
    const { ok, status, data } = await postJson("/api/webgal/jump", { scene, line, wait, dedupe });
    if (!ok) {
      const message = (data && data.error && data.error.message) || `HTTP ${status}`;
      // Without the server route the frame can still be jumped directly.
      const api = this.frameApi();
      if (status === 404 && api && noRoute(data)) {
        api.jump(scene, line);
        return { scene, line, delivered: 1, landed: false, local: true };
      }
      throw new Error(message);
    }
    return data;
  }

  reloadGame(target) {
    const hash = target && target.scene ? `#scene=${encodeURIComponent(target.scene).replace(/%2F/g, "/")}&line=${target.line || 1}` : "";
    this.frameState = null;
    this.showStatus(() => this.t("game.restarting"));
    this.frame.src = `${this.pagePath()}${this.pagePath().includes("?") ? "&" : "?"}r=${Date.now()}${hash}`;
  }

  scheduleResync(changes) {
    const state = this.frameState;
    if (changes.some((c) => RELOAD_FILES.test(c.path))) this.reloadPending = true;
    clearTimeout(this.resyncTimer);
    this.resyncTimer = setTimeout(() => {
      const reload = this.reloadPending;
      this.reloadPending = false;
      const now = this.frameState || state;
      if (reload) {
        this.reloadGame(now && now.scene ? { scene: now.scene, line: now.line || 1 } : null);
        return;
      }
      if (!now || !now.scene) return;
      const changedScene = changes.some((c) => c.path === SCENE_DIR + now.scene);
      const api = this.frameApi();
      // Only this frame: every open tab re-syncs its own game.
      if (changedScene && api) api.jump(now.scene, Math.max(1, now.line || 1));
    }, RESYNC_DEBOUNCE_MS);
  }

  // -- review pins and following the agent (viewer contract, "Annotate", "Follow the agent") --

  showPins(pins) {
    this.pins = Array.isArray(pins) ? pins : [];
    // A selection the shell made a pin of is the pin's now: not the viewer's
    // to announce again (a switch of language would pin it once more).
    const s = this.selection;
    if (s && this.pins.some((p) => p.selection && p.selection.file === s.file
      && p.selection.start === Math.min(s.start, s.end) && p.selection.end === Math.max(s.start, s.end))) {
      this.selection = null;
      this.markLines();
    }
    this.renderPins();
  }

  renderPins() {
    markPins(this.lines, this.pins, this.file, {
      title: (pin) => pin.comment || this.t("pin.title", { number: pin.number }),
      onClick: (pin) => this.revealPin(pin),
    });
  }

  pinPlace(selection, files) {
    const file = (files || this.files()).find((f) => f.path === selection?.file);
    return file && !file.binary ? linesText(file.content, selection) : "";
  }

  revealPin(pin) {
    const s = pin && pin.selection;
    if (!s || this.fileContent(s.file) == null) return;
    this.open(s.file, { line: Math.min(s.start, s.end) });
  }

  async reveal(path) {
    const file = this.fileContent(path) != null ? path : this.fileContent(scenePath(path)) != null ? scenePath(path) : null;
    if (!file || !(isScene(file) || file === CONFIG_FILE)) return false;
    if (file !== this.file) this.open(file);
    return true;
  }

  // -- the contract --

  update(files, changes) {
    const list = changes || [];
    let scenesChanged = false;
    for (const change of list) {
      if (isScene(change.path) || change.path === CONFIG_FILE) scenesChanged = true;
      if (isScene(change.path)) {
        if (change.deleted) this.diagnostics.delete(change.path);
        else this.validate(change.path, VALIDATE_DEBOUNCE_MS);
      }
    }
    if (this.file && list.some((c) => c.path === this.file)) this.renderScript();
    if (!this.file) {
      const first = this.scenePaths()[0];
      if (first) this.open(first, { quiet: true });
    }
    if (scenesChanged) this.renderScenes();
    if (list.some((c) => c.path.startsWith("game/"))) this.scheduleResync(list);
  }

  async runAction(actionId, params = {}) {
    if (actionId === "navigate-to") {
      const file = String(params.file || "").replace(/^\.?\//, "");
      const path = this.fileContent(file) != null ? file : this.fileContent(scenePath(file)) != null ? scenePath(file) : null;
      if (!path) {
        return { success: false, message: `${file} is not a text file of this workspace (scenes: ${this.scenePaths().map(sceneName).join(", ") || "none"})` };
      }
      this.open(path);
      return { success: true, message: `Opened ${path}`, data: { file: path, lines: splitLines(this.fileContent(path)).length } };
    }
    if (actionId === "preview-scene") {
      const path = scenePath(params.scene);
      if (this.fileContent(path) == null) {
        return { success: false, message: `${path} does not exist (scenes: ${this.scenePaths().map(sceneName).join(", ") || "none"})` };
      }
      const total = splitLines(this.fileContent(path)).length;
      const line = Math.min(Math.max(1, Math.floor(Number(params.line) || 1)), total);
      this.open(path, { line });
      const result = await this.jump(sceneName(path), line, { wait: JUMP_WAIT_S, dedupe: true });
      const shown = result.preview || (this.frameState && this.frameState.scene === sceneName(path) ? this.frameState : null);
      const data = { scene: sceneName(path), file: path, line, landed: !!result.landed, delivered: result.delivered ?? 0 };
      if (shown) Object.assign(data, { speaker: shown.speaker || "", text: shown.text || "", atLine: shown.line });
      const message = result.landed
        ? `The game is at ${sceneName(path)} line ${line}${shown && shown.text ? `, showing “${shown.text}”` : ""}`
        : result.delivered
          ? `Jump to ${sceneName(path)} line ${line} sent; the game has not reported landing yet`
          : `No game is running yet; it will jump to ${sceneName(path)} line ${line} as soon as it opens`;
      return { success: true, message, data };
    }
    if (actionId === "describe-view") {
      const range = this.selection ? lineRange(this.selection) : null;
      const diag = this.file ? this.diagnostics.get(this.file) : null;
      const game = this.frameState && this.frameState.scene
        ? { scene: this.frameState.scene, line: this.frameState.line, speaker: this.frameState.speaker, text: this.frameState.text }
        : { running: false };
      const data = {
        file: this.file,
        scenes: this.scenePaths().map(sceneName),
        selection: range ? { file: this.selection.file, lines: rangeLabel(range) } : null,
        cursorLine: this.cursor,
        game,
        diagnostics: diag && Array.isArray(diag.diagnostics) ? diag.diagnostics : null,
      };
      const parts = [this.file ? `Open: ${this.file}` : "No file open"];
      if (range) parts.push(`selected lines ${rangeLabel(range)}`);
      parts.push(game.scene ? `the game is at ${game.scene} line ${game.line}${game.text ? ` (“${game.text}”)` : ""}` : "the game has not started");
      return { success: true, message: `${parts.join("; ")}.`, data };
    }
    return { success: false, message: `'${actionId}' is not supported by the webgal viewer` };
  }

  destroy() {
    if (this.stopLocale) this.stopLocale();
    clearTimeout(this.resyncTimer);
    for (const timer of this.validateTimers.values()) clearTimeout(timer);
    try {
      if (this.unsubscribe) this.unsubscribe();
    } catch {
      // the frame's page is gone already
    }
    this.root.remove();
    releaseCss();
  }
}

export default {
  capabilities: ["annotate", "follow"],

  mount(element, ctx) {
    return new WebgalViewer(element, ctx);
  },
  extractContext,
  resolveItems,
};

export { extractContext, highlight, resolveItems, scenePath };
