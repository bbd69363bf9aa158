// The mode-maker viewer (docs/mode-maker.md): the mode under construction,
// live. The workspace is a mode package; this page plays its viewer in an
// isolated frame on its own seed files (play-frame.js, play-harness.js),
// reloading as the package's files change, shows the viewer's errors in a
// problem box, the package's files and its manifest's summary, and runs
// Check, Install and Package (jobs.js). A selection made in Play becomes
// this page's selection, carrying the new mode's own <viewer-context>.

import { fetchJson, h } from "/static/lib/viewer-helpers.js";
import { translator } from "./i18n.js";
import { Jobs, describeOutcome, failedChecks } from "./jobs.js";
import { affectsPlay, readPackage, seedSamples, sharedImports, viewerAssets, viewerModules } from "./package-info.js";
import { PlayFrame } from "./play-frame.js";

const CSS_URL = new URL("./viewer.css", import.meta.url).href;
const RELOAD_DEBOUNCE_MS = 150;
// run-check without `full`: the checks that need no browser (a second or two).
const QUICK_CHECKS = ["manifest", "imports", "locales"];

/** The answer to an action that changes something and was not confirmed:
 * nothing is done (a checker calling every action must not install). */
function notConfirmed(actionId, what) {
  return { success: false, message: `Nothing done: ${what}. Call ${actionId} with {"confirm": true} to go ahead.` };
}

/** UTF-8 text without NUL characters, or null for a binary file. */
function decodedText(data) {
  try {
    const text = new TextDecoder("utf-8", { fatal: true }).decode(data);
    return text.includes("\u0000") ? null : text;
  } catch {
    return null;
  }
}

class MakerViewer {
  constructor(element, ctx) {
    this.ctx = ctx;
    this.locale = ctx.locale || "en";
    this.t = translator(() => this.locale);
    this.files = ctx.files || [];
    this.pkg = readPackage(this.files);
    this.activeFile = null;
    this.seedProblem = null;
    this.sharedCache = new Map(); // /static/… path -> its source
    this.reloadTimer = 0;
    this.jobs = new Jobs(() => this.renderJobs());
    this.build(element);
    this.play = new PlayFrame(this.playBox, {
      onState: (state) => this.renderPlayState(state),
      onSelection: (selection, context) => this.fromPlay(selection, context),
      onMessage: () => {},
    });
    this.stopLocale = ctx.onLocaleChange?.((locale) => this.relabel(locale));
    this.renderAll();
    this.reloadPlay();
    fetchJson("/api/mode-maker/status").then((status) => {
      this.seedProblem = status?.seedProblem || null;
      this.renderSummary();
    }).catch(() => {});
  }

  build(element) {
    const link = h("link", { rel: "stylesheet", href: CSS_URL });
    this.root = h("div", { class: "mm-viewer" },
      link,
      h("aside", { class: "mm-side" },
        this.toolbar = h("div", { class: "mm-toolbar", role: "toolbar" },
          this.checkButton = h("button", { type: "button", class: "mm-check", onclick: () => this.runCheck() }),
          this.installButton = h("button", { type: "button", class: "mm-install", onclick: () => this.runInstall(false) }),
          this.packageButton = h("button", { type: "button", class: "mm-package", onclick: () => this.runPackage() })),
        this.status = h("div", { class: "mm-status", role: "status", "aria-live": "polite" }),
        this.failures = h("ul", { class: "mm-failures" }),
        this.anywayButton = h("button", { type: "button", class: "mm-install-anyway", hidden: true, onclick: () => this.runInstall(true) }),
        this.summaryTitle = h("h2", { class: "mm-heading" }),
        this.summary = h("dl", { class: "mm-summary" }),
        this.filesTitle = h("h2", { class: "mm-heading" }),
        this.tree = h("ul", { class: "mm-files" })),
      h("section", { class: "mm-main" },
        h("div", { class: "mm-play-head" },
          this.playTitle = h("h2", { class: "mm-heading" }),
          this.playStatus = h("span", { class: "mm-play-status" }),
          this.reloadButton = h("button", { type: "button", class: "mm-reload", onclick: () => this.reloadPlay() })),
        this.playBox = h("div", { class: "mm-play" }),
        this.problemBox = h("div", { class: "mm-problems", role: "alert", hidden: true }),
        this.selectionBox = h("div", { class: "mm-selection", hidden: true })));
    element.appendChild(this.root);
  }

  // --- rendering ---------------------------------------------------------------

  renderAll() {
    this.toolbar.setAttribute("aria-label", this.t("toolbar.label"));
    this.checkButton.textContent = this.t("button.check");
    this.installButton.textContent = this.t("button.install");
    this.anywayButton.textContent = this.t("button.installAnyway");
    this.packageButton.textContent = this.t("button.package");
    this.reloadButton.textContent = this.t("button.reload");
    this.summaryTitle.textContent = this.t("summary.title");
    this.filesTitle.textContent = this.t("files.title");
    this.renderSummary();
    this.renderFiles();
    this.renderJobs();
    this.renderPlayState(this.play?.state || { status: "idle", problems: [] });
  }

  relabel(locale) {
    this.locale = locale;
    this.renderAll();
    this.play.setLocale(locale);
  }

  renderSummary() {
    const s = this.pkg.summary;
    const row = (key, value) => [h("dt", { text: this.t(key) }), h("dd", { text: value || this.t("summary.none") })];
    this.summary.replaceChildren();
    if (this.seedProblem) this.summary.append(h("p", { class: "mm-error", text: this.t("seed.problem", { reason: this.seedProblem }) }));
    if (!s) {
      this.summary.append(h("p", { class: "mm-error", text: this.pkg.entry ? this.t("summary.broken", { reason: this.pkg.error }) : this.t("play.noPackage") }));
      return;
    }
    this.summary.append(...row("summary.name", `${s.name} ${s.version}`), ...row("summary.package", this.pkg.entry.package),
      ...row("summary.actions", s.actions.join(", ")), ...row("summary.tools", s.tools.join(", ")),
      ...row("summary.locales", s.locales.join(", ")));
  }

  renderFiles() {
    const paths = this.files.map((f) => f.path).sort();
    this.tree.replaceChildren(...paths.map((path) => {
      const cut = path.lastIndexOf("/") + 1;
      return h("li", { class: "mm-file", "data-path": path, "aria-current": String(path === this.activeFile), title: path },
        h("span", { class: "mm-file-dir", text: path.slice(0, cut) }), h("span", { class: "mm-file-name", text: path.slice(cut) }));
    }));
  }

  renderJobs() {
    const busy = Boolean(this.jobs.running);
    for (const button of [this.checkButton, this.installButton, this.packageButton, this.anywayButton]) button.disabled = busy;
    const running = { check: "status.checking", install: "status.installing", package: "status.packaging" }[this.jobs.running];
    if (running) {
      this.status.textContent = this.t(running);
      this.status.dataset.state = "running";
    }
  }

  renderPlayState(state) {
    const name = this.pkg.summary?.name || "";
    this.playTitle.textContent = this.t("play.title", { name });
    this.playStatus.textContent = state.status === "mounted" ? this.t("play.mounted") : state.status === "loading" ? this.t("play.loading") : "";
    this.playStatus.dataset.status = state.status;
    const problems = state.problems || [];
    this.problemBox.hidden = problems.length === 0;
    this.problemBox.replaceChildren(h("h3", { text: this.t("problems.title") }),
      ...problems.map((p) => h("pre", { class: "mm-problem", "data-kind": p.kind, text: p.stack && !p.stack.includes(p.message) ? `${p.message}\n${p.stack}` : p.stack || p.message })));
    const selection = state.selection;
    this.selectionBox.hidden = !selection;
    if (selection) {
      const label = selection.value?.label || selection.value?.file || "";
      this.selectionBox.replaceChildren(h("h3", { text: this.t("selection.title") }), h("p", { class: "mm-selection-label", text: String(label) }),
        h("pre", { class: "mm-selection-context", text: selection.context }));
    }
  }

  // --- Play --------------------------------------------------------------------

  async reloadPlay() {
    if (!this.pkg.summary) return;
    const modules = viewerModules(this.files, this.pkg);
    const shared = await this.sharedModules(Object.values(modules));
    const samples = seedSamples(this.files, this.pkg);
    // A sample the maker's snapshot carries without text (a suffix only the
    // new mode knows as text, a picture) is fetched: text when it decodes.
    const blobs = {};
    const texts = {};
    for (const sample of samples.filter((s) => typeof s.source.content !== "string")) {
      const data = await this.fetchBytes(sample.source.path);
      if (!data) continue;
      blobs[sample.path] = data;
      const text = decodedText(data);
      if (text !== null) texts[sample.path] = text;
    }
    const assets = {};
    for (const asset of viewerAssets(this.files, this.pkg)) {
      const data = await this.fetchBytes(asset.path);
      if (data) assets[asset.key] = data;
    }
    const files = samples.map((s) => {
      const content = typeof s.source.content === "string" ? s.source.content : texts[s.path];
      return typeof content === "string" ? { path: s.path, content } : { path: s.path, binary: true };
    });
    this.play.load({
      title: this.t("play.frame"), entry: this.pkg.summary.module, modules, shared, files, blobs, assets,
      manifest: this.pkg.manifest, locale: this.locale,
    });
  }

  /** A workspace file's bytes (same origin, the session's cookie), or null:
   * a file that cannot be read shows as missing in Play, where the viewer says so. */
  async fetchBytes(path) {
    try {
      const response = await fetch(this.ctx.contentUrl(path), { credentials: "same-origin" });
      return response.ok ? await response.arrayBuffer() : null;
    } catch {
      return null;
    }
  }

  /** The shell's modules the viewer imports (/static/lib/…), fetched once each. */
  async sharedModules(sources) {
    const shared = {};
    let wanted = sharedImports(sources);
    while (wanted.length) {
      const next = [];
      for (const path of wanted) {
        if (path in shared) continue;
        if (!this.sharedCache.has(path)) {
          const response = await fetch(path, { credentials: "same-origin" });
          this.sharedCache.set(path, response.ok ? await response.text() : "");
        }
        shared[path] = this.sharedCache.get(path);
        next.push(...sharedImports([shared[path]]));
      }
      wanted = next.filter((p) => !(p in shared));
    }
    return shared;
  }

  fromPlay(selection, context) {
    if (!selection) {
      this.ctx.setSelection?.(null);
      return;
    }
    const label = String(selection.label || selection.file || "Play");
    this.ctx.setSelection?.({ kind: "play", mode: this.pkg.summary?.name || "", label, context, selection });
  }

  // --- the shell's calls -------------------------------------------------------

  update(files, changes) {
    this.files = files || [];
    this.pkg = readPackage(this.files);
    this.renderSummary();
    this.renderFiles();
    if ((changes || []).some((c) => affectsPlay(c.path, this.pkg))) {
      clearTimeout(this.reloadTimer);
      this.reloadTimer = setTimeout(() => this.reloadPlay(), RELOAD_DEBOUNCE_MS);
    }
  }

  async runCheck(only = null) {
    const outcome = await this.jobs.run("check", only ? { only } : {});
    this.showOutcome("check", outcome);
    return outcome;
  }

  async runInstall(anyway) {
    const outcome = await this.jobs.run("install", { anyway });
    this.showOutcome("install", outcome);
    return outcome;
  }

  async runPackage() {
    const outcome = await this.jobs.run("package");
    this.showOutcome("package", outcome);
    return outcome;
  }

  showOutcome(kind, outcome) {
    const failures = outcome.ok && kind === "check" ? failedChecks(outcome.answer) : [];
    this.failures.replaceChildren(...failures.map((f) => h("li", { class: "mm-failure", "data-check": f.check },
      h("strong", { text: f.check }), h("span", { text: ` ${f.message}` }))));
    this.anywayButton.hidden = !(kind === "install" && !outcome.ok && outcome.error.code === "E_CHECK_FAILED");
    this.status.dataset.state = outcome.ok && !failures.length ? "ok" : "failed";
    if (!outcome.ok) {
      this.status.textContent = this.t("status.failed", { what: this.t(`what.${kind}`), reason: outcome.error.message });
    } else if (kind === "check") {
      const count = (outcome.answer?.results || []).length;
      this.status.textContent = failures.length ? this.t("status.checkFailed", { count: failures.length }) : this.t("status.checkPassed", { count });
    } else if (kind === "install") {
      this.status.textContent = this.t("status.installed", { name: outcome.answer.name, version: outcome.answer.version });
    } else {
      this.status.textContent = this.t("status.packaged", { wheel: outcome.answer.wheel });
    }
  }

  async describeView() {
    const state = await this.play.describe();
    const s = this.pkg.summary;
    const lines = [
      s ? `Mode under construction: ${s.name} ${s.version} (package ${this.pkg.entry.package}); actions: ${s.actions.join(", ") || "none"}; tools: ${s.tools.join(", ") || "none"}; locales: ${s.locales.join(", ") || "none"}`
        : `No readable mode package: ${this.pkg.error}`,
      `Play: ${state.status}${state.text ? `; it shows: ${state.text.slice(0, 300)}` : ""}`,
      ...state.problems.map((p) => `Play problem (${p.kind}): ${p.message}`),
    ];
    if (state.selection) lines.push(`Selected in Play: ${state.selection.context || JSON.stringify(state.selection.value)}`);
    for (const kind of ["check", "install", "package"]) if (this.jobs.last[kind]) lines.push(describeOutcome(kind, this.jobs.last[kind]));
    return {
      success: true,
      message: lines.join("\n"),
      data: { summary: s, play: { status: state.status, text: state.text, problems: state.problems, loads: state.loads },
        selection: state.selection, activeFile: this.activeFile },
    };
  }

  async navigateTo(params) {
    const file = typeof params.file === "string" ? params.file.trim() : "";
    if (file && !this.files.some((f) => f.path === file)) {
      return { success: false, message: `No file '${file}' in the package (files: ${this.files.map((f) => f.path).slice(0, 40).join(", ")})` };
    }
    if (file) {
      this.activeFile = file;
      this.renderFiles();
      this.ctx.setActiveFile?.(file);
    }
    await this.reloadPlay();
    const state = await this.whenPlaySettles();
    return {
      success: state.status === "mounted" && !state.problems.length,
      message: state.status === "mounted"
        ? `Play reloaded: the viewer mounted${state.problems.length ? ` with ${state.problems.length} problem(s): ${state.problems.map((p) => p.message).join("; ")}` : ""}`
        : `Play reloaded: the viewer did not mount: ${state.problems.map((p) => p.message).join("; ") || "no answer from the frame"}`,
      data: { status: state.status, text: state.text, problems: state.problems },
    };
  }

  async whenPlaySettles(ms = 8000) {
    const deadline = Date.now() + ms;
    while (this.play.state.status === "loading" && !this.play.state.problems.length && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    return this.play.state;
  }

  async runAction(actionId, params = {}) {
    switch (actionId) {
      case "describe-view":
        return this.describeView();
      case "navigate-to":
        return this.navigateTo(params);
      case "run-check": {
        const outcome = await this.runCheck(params.full === true ? null : QUICK_CHECKS);
        return { success: outcome.ok && !failedChecks(outcome.answer).length, message: describeOutcome("check", outcome), data: outcome.ok ? outcome.answer : { error: outcome.error } };
      }
      case "install-mode": {
        if (params.confirm !== true) return notConfirmed("install-mode", "installing changes the Python environment Pneuma runs in");
        const outcome = await this.runInstall(params.anyway === true);
        return { success: outcome.ok, message: describeOutcome("install", outcome), data: outcome.ok ? outcome.answer : { error: outcome.error } };
      }
      case "package-mode": {
        if (params.confirm !== true) return notConfirmed("package-mode", "pip builds the wheel into dist/");
        const outcome = await this.runPackage();
        return { success: outcome.ok, message: describeOutcome("package", outcome), data: outcome.ok ? outcome.answer : { error: outcome.error } };
      }
      case "play-action": {
        if (typeof params.actionId !== "string" || !params.actionId) return { success: false, message: "play-action needs 'actionId': an action of the new mode's manifest" };
        const result = await this.play.runAction(params.actionId, params.params || {});
        if (result === null) return { success: false, message: "Play did not answer (is the viewer mounted? see describe-view)" };
        return { success: true, message: `The new mode's ${params.actionId} answered in Play`, data: { result } };
      }
      default:
        return { success: false, message: `'${actionId}' is not an action of the mode-maker viewer` };
    }
  }

  destroy() {
    clearTimeout(this.reloadTimer);
    this.stopLocale?.();
    this.play.destroy();
    this.root.remove();
  }
}

/** The new mode's own <viewer-context>, made by its extractContext in Play. */
export function extractContext(selection) {
  if (!selection || selection.kind !== "play") return "";
  return String(selection.context || "");
}

export default {
  mount(element, ctx) {
    const viewer = new MakerViewer(element, ctx);
    return {
      update: (files, changes) => viewer.update(files, changes),
      runAction: (actionId, params) => viewer.runAction(actionId, params),
      destroy: () => viewer.destroy(),
    };
  },
  extractContext,
};
