// Pneuma's draw viewer: the real Excalidraw editor on the workspace's
// .excalidraw files (viewer contract: docs/viewer-contract.md).
// The file on disk is the truth. The agent's writes arrive as content_update
// (origin "external") and replace the scene in place, keeping the person's
// viewport; the person's own strokes are written back about half a second
// after they stop (their echo comes back as origin "self" and is ignored).
//
// Excalidraw, React and its fonts come from ./vendor/ (built at setup by
// plugins/draw/web): nothing is fetched from outside this server.

import { translator, excalidrawLangCode } from "./i18n.js";
import { loadLibrary } from "./library.js";
import { watchControlNames } from "./control-names.js";
import { pinMethods } from "./pins.js";
import {
  DARK, EXT, blobToDataUrl, chipLabel, compareDrawings, composeFile, contextFor, currentTheme,
  isDrawing, normalizePath, parseDrawing, pick, resolveTargets, round, selectAndZoom, selectedItems, sleep, stem,
  versionOf, zoomTo,
} from "./drawing.js";

const SAVE_DELAY_MS = 500;
// appState keys a .excalidraw file carries and an external change may set.
const FILE_APP_STATE = ["viewBackgroundColor", "gridSize", "gridStep", "gridModeEnabled"];

// --- the viewer ------------------------------------------------------------------

class DrawViewer {
  constructor(element, ctx) {
    this.ctx = ctx;
    this.t = translator(() => ctx.locale || "en");
    this.host = element;
    this.lib = null;
    this.api = null;
    this.reactRoot = null;
    this.destroyed = false;
    this.drawings = new Map(); // path -> text content (null when not yet known)
    this.current = null; // path on screen
    this.mountKey = 0;
    this.synced = null; // what the file on disk holds: {path, text, doc, hash, versions}
    this.recentWrites = []; // texts we wrote lately (their echoes are ours)
    this.saveTimer = null;
    this.saving = Promise.resolve();
    this.userTouched = false; // the person interacted since the last save
    this.selectionKey = "";
    this.pinnedKey = null; // the selection the shell made a pin of (not announced again)
    this.pins = []; // the review pins the shell shows (showPins)
    // Counters a test (or a curious developer) can read: loads of a file,
    // external changes applied in place, saves written.
    this.stats = { loads: 0, externalApplied: 0, saves: 0 };
    this.ready = null;
    this.markReady = null;
    this.resetReady();

    for (const file of ctx.files || []) {
      if (isDrawing(file.path) && !file.binary) this.drawings.set(file.path, file.content ?? null);
    }

    this.root = document.createElement("div");
    this.root.className = "pneuma-draw";
    this.canvasEl = document.createElement("div");
    this.canvasEl.className = "pneuma-draw-canvas";
    this.notice = document.createElement("div");
    this.notice.className = "pneuma-draw-notice";
    this.notice.hidden = true;
    this.notice.setAttribute("role", "status");
    this.empty = document.createElement("div");
    this.empty.className = "pneuma-draw-empty";
    this.empty.hidden = true;
    this.mobileSlot = document.createElement("div");
    this.mobileSlot.className = "pneuma-draw-mobile-slot";
    this.isMobile = false;
    this.pinLayer = document.createElement("div");
    this.pinLayer.className = "pneuma-draw-pins";
    this.root.append(this.canvasEl, this.pinLayer, this.mobileSlot, this.notice, this.empty);
    element.appendChild(this.root);

    // Only what the person does counts as an edit worth saving; Excalidraw's
    // own adjustments after a load (text re-measured once fonts arrive) do not.
    this.onUserInput = () => {
      this.userTouched = true;
    };
    for (const type of ["pointerdown", "keydown", "paste", "drop", "cut", "input"]) {
      this.root.addEventListener(type, this.onUserInput, true);
    }
    this.onPageHide = () => this.flushSave();
    window.addEventListener("pagehide", this.onPageHide);
    this.themeObserver = new MutationObserver(() => this.render());
    this.themeObserver.observe(document.documentElement, { attributes: true, attributeFilter: ["data-theme", "class"] });
    this.controlNames = watchControlNames(this.canvasEl, () => this.t("excalidraw.menu"));
    this.onThemeChange = () => this.render();
    this.darkQuery = window.matchMedia ? window.matchMedia(DARK) : null;
    this.darkQuery?.addEventListener?.("change", this.onThemeChange);
    // The person switched the page's language: our labels, Excalidraw's
    // (its langCode) and the selection chip follow.
    this.stopLocale = ctx.onLocaleChange?.(() => this.relabel()) || null;

    this.start();
  }

  resetReady() {
    this.ready = new Promise((resolve) => {
      this.markReady = resolve;
    });
  }

  async start() {
    try {
      this.lib = await loadLibrary();
    } catch (err) {
      this.showEmpty(() => [this.t("load.title"), this.t("load.text", { message: err.detail || err.message }), null]);
      console.error(err);
      return;
    }
    if (this.destroyed) return;
    this.reactRoot = this.lib.createRoot(this.canvasEl);
    const first = this.pickInitialFile();
    if (first) await this.open(first);
    else this.showNoDrawing();
  }

  pickInitialFile() {
    const paths = this.sortedDrawings();
    if (!paths.length) return null;
    let remembered = null;
    try {
      remembered = sessionStorage.getItem(this.storageKey());
    } catch {
      remembered = null;
    }
    if (remembered && this.drawings.has(remembered)) return remembered;
    // The most recently changed drawing is the one being worked on.
    const mtimes = new Map((this.ctx.files || []).map((f) => [f.path, f.mtime || 0]));
    return paths.slice().sort((a, b) => (mtimes.get(b) || 0) - (mtimes.get(a) || 0) || compareDrawings(a, b))[0];
  }

  storageKey() {
    return `pneuma-draw:open:${location.pathname}${location.search.replace(/([?&])token=[^&]*/, "$1")}`;
  }

  sortedDrawings() {
    return [...this.drawings.keys()].sort(compareDrawings);
  }

  async readText(path) {
    const known = this.drawings.get(path);
    if (typeof known === "string") return known;
    const res = await fetch(this.ctx.contentUrl(path), { credentials: "same-origin", cache: "no-store" });
    if (!res.ok) throw new Error(`could not read ${path}: HTTP ${res.status}`);
    const text = await res.text();
    this.drawings.set(path, text);
    return text;
  }

  // --- showing a file --------------------------------------------------------------

  async open(path) {
    await this.flushSave();
    const text = await this.readText(path);
    let doc;
    try {
      doc = parseDrawing(text);
    } catch (err) {
      this.current = path;
      this.synced = null;
      this.ctx.setActiveFile?.(path);
      this.showEmpty(() => [this.t("invalid.title", { file: path }), this.t("invalid.text", { problem: this.problemText(err) }), null]);
      this.render();
      this.markReady();
      return;
    }
    this.hideEmpty();
    this.hideNotice();
    this.current = path;
    this.synced = { path, text, doc, hash: null, versions: new Map() };
    this.selectionKey = "";
    this.ctx.setSelection?.(null);
    this.ctx.setActiveFile?.(path);
    try {
      sessionStorage.setItem(this.storageKey(), path);
    } catch {
      /* private mode: nothing to remember */
    }
    this.api = null;
    this.resetReady();
    this.mountKey += 1;
    this.stats.loads += 1;
    this.initialData = {
      elements: doc.elements,
      appState: { ...pick(doc.appState, FILE_APP_STATE) },
      files: doc.files || {},
      scrollToContent: true,
    };
    this.render();
    await this.ready;
  }

  render() {
    if (!this.reactRoot || this.destroyed) return;
    const { createElement: h, Excalidraw, MainMenu, Footer, Fragment, createPortal } = this.lib;
    if (!this.current || !this.initialData) {
      this.reactRoot.render(null);
      return;
    }
    const key = `${this.current}#${this.mountKey}`;
    const editor = h(
      Excalidraw,
      {
        key,
        initialData: this.initialData,
        excalidrawAPI: (api) => this.onApi(api, key),
        onPointerUp: (tool, down) => this.onRegionDrag(tool, down), // a dragged region (pins.js)
        onChange: (elements, appState, files) => this.onChange(elements, appState, files),
        // The footer holds the picker; Excalidraw's compact (phone) layout
        // has no footer, so there it goes into a slot over the bottom bar.
        renderTopRightUI: (isMobile) => {
          if (Boolean(isMobile) !== this.isMobile) {
            this.isMobile = Boolean(isMobile);
            queueMicrotask(() => this.render());
          }
          return null;
        },
        theme: currentTheme(),
        langCode: excalidrawLangCode(this.ctx.locale),
        name: stem(this.current.split("/").pop()),
        autoFocus: true,
        handleKeyboardGlobally: false,
        UIOptions: {
          canvasActions: { loadScene: false, saveToActiveFile: false, toggleTheme: null, export: { saveFileToDisk: true } },
        },
      },
      h(
        MainMenu,
        null,
        h(MainMenu.DefaultItems.SaveAsImage),
        h(MainMenu.DefaultItems.Export),
        h(MainMenu.DefaultItems.SearchMenu),
        h(MainMenu.DefaultItems.CommandPalette),
        h(MainMenu.DefaultItems.Help),
        h(MainMenu.DefaultItems.ClearCanvas),
        h(MainMenu.Separator),
        h(MainMenu.DefaultItems.ChangeCanvasBackground),
      ),
      this.isMobile ? null : h(Footer, null, this.renderFilePicker(h)),
    );
    this.reactRoot.render(
      h(Fragment, null, editor, this.isMobile ? createPortal(this.renderFilePicker(h, true), this.mobileSlot) : null),
    );
  }

  renderFilePicker(h, compact = false) {
    const paths = this.sortedDrawings();
    const children = [];
    if (paths.length > 1) {
      children.push(
        h(
          "select",
          {
            key: "files",
            value: this.current || "",
            title: this.t("picker.title"),
            "aria-label": this.t("picker.label"),
            "data-testid": "pneuma-draw-file-picker",
            onChange: (event) => this.open(event.target.value),
          },
          paths.map((p) => h("option", { key: p, value: p }, p)),
        ),
      );
    } else if (this.current) {
      children.push(h("span", { key: "name", className: "pneuma-draw-name", title: this.current }, this.current));
    }
    children.push(
      h("button", { key: "new", type: "button", title: this.t("picker.new"), "aria-label": this.t("picker.new"), onClick: () => this.createDrawing() }, "+"),
    );
    return h("div", { className: compact ? "pneuma-draw-files pneuma-draw-files-compact" : "pneuma-draw-files" }, children);
  }

  onApi(api, key) {
    if (!api || key !== `${this.current}#${this.mountKey}`) return;
    this.api = api;
    // Excalidraw loads initialData asynchronously; the scene is ours once
    // isLoading clears. Then remember what the file holds, as Excalidraw sees it.
    const wait = async () => {
      for (let i = 0; i < 400 && this.api === api; i += 1) {
        if (!api.getAppState().isLoading) break;
        await sleep(25);
      }
      if (this.api !== api) return;
      // Show the whole drawing: zoom out if it does not fit, never in past 100 %.
      const state = api.getAppState();
      const elements = api.getSceneElements();
      if (elements.length && state.width > 80 && state.height > 80) {
        api.scrollToContent(elements, { fitToViewport: true, viewportZoomFactor: 0.92, maxZoom: 1, minZoom: 0.1, animate: false });
      }
      this.rebaseline();
      this.userTouched = false;
      this.markReady();
    };
    wait();
  }

  rebaseline() {
    if (!this.api || !this.synced) return;
    const elements = this.api.getSceneElementsIncludingDeleted();
    this.synced.hash = this.sceneHash(elements, this.api.getAppState());
    this.synced.versions = new Map(elements.map((e) => [e.id, versionOf(e)]));
  }

  sceneHash(elements, appState) {
    const { hashElementsVersion } = this.lib;
    return `${hashElementsVersion(elements)}|${FILE_APP_STATE.map((k) => appState[k]).join("|")}`;
  }

  // --- the person's edits --------------------------------------------------------

  onChange(elements, appState) {
    if (!this.api || !this.synced || this.destroyed) return;
    this.updateSelection(elements, appState);
    this.renderPins(); // a scroll, a zoom or a moved element moves its marker
    if (!this.userTouched) return;
    if (this.sceneHash(elements, appState) === this.synced.hash) return;
    this.scheduleSave();
  }

  scheduleSave() {
    clearTimeout(this.saveTimer);
    this.saveTimer = setTimeout(() => {
      this.saveTimer = null;
      this.save();
    }, SAVE_DELAY_MS);
  }

  busy(appState) {
    // Mid-gesture: save when the stroke, drag or resize is over.
    return Boolean(
      appState.newElement || appState.multiElement || appState.resizingElement ||
        appState.selectedElementsAreBeingDragged || appState.isResizing || appState.isRotating,
    );
  }

  save() {
    const run = this.saving.then(() => this.writeScene()).catch((err) => {
      console.error("[draw] saving failed", err);
      const file = this.current;
      this.showNotice(() => this.t("notice.saveFailed", { file, message: err.message || err }));
    });
    this.saving = run;
    return run;
  }

  async flushSave() {
    if (this.saveTimer) {
      clearTimeout(this.saveTimer);
      this.saveTimer = null;
      this.save();
    }
    await this.saving;
  }

  async writeScene() {
    const api = this.api;
    const synced = this.synced;
    if (!api || !synced || synced.path !== this.current) return;
    const appState = api.getAppState();
    if (this.busy(appState)) {
      this.scheduleSave();
      return;
    }
    const elements = api.getSceneElementsIncludingDeleted();
    const hash = this.sceneHash(elements, appState);
    if (hash === synced.hash) return;
    const exported = JSON.parse(this.lib.serializeAsJSON(elements, appState, api.getFiles(), "local"));
    const doc = composeFile(synced.doc, exported);
    const text = `${JSON.stringify(doc, null, 2)}\n`;
    synced.hash = hash;
    synced.versions = new Map(elements.map((e) => [e.id, versionOf(e)]));
    synced.text = text;
    synced.doc = doc;
    this.userTouched = false;
    this.drawings.set(synced.path, text);
    this.recentWrites.push(text);
    if (this.recentWrites.length > 8) this.recentWrites.shift();
    this.stats.saves += 1;
    const answer = await this.ctx.writeFile(synced.path, text);
    if (answer && answer.error) throw new Error(answer.error.message || String(answer.error.code || "write refused"));
    this.hideNotice();
  }

  async createDrawing() {
    const taken = new Set(this.drawings.keys());
    let n = 1;
    let suggestion = "drawing";
    while (taken.has(`${suggestion}${EXT}`)) suggestion = `drawing-${++n}`;
    const answer = window.prompt(this.t("new.prompt"), suggestion);
    if (answer == null) return;
    let name = normalizePath(answer);
    if (!name) return;
    if (!isDrawing(name)) name += EXT;
    if (taken.has(name)) {
      await this.open(name);
      return;
    }
    const doc = {
      type: "excalidraw",
      version: 2,
      source: "pneuma-draw",
      elements: [],
      appState: { viewBackgroundColor: "#ffffff", gridSize: 20, gridStep: 5, gridModeEnabled: false },
      files: {},
    };
    const text = `${JSON.stringify(doc, null, 2)}\n`;
    this.recentWrites.push(text);
    await this.ctx.writeFile(name, text);
    this.drawings.set(name, text);
    await this.open(name);
  }

  // --- selection -------------------------------------------------------------------

  updateSelection(elements, appState) {
    const ids = Object.keys(appState.selectedElementIds || {}).filter((id) => appState.selectedElementIds[id]).sort();
    const key = `${this.current}|${ids.join(",")}`;
    if (key === this.selectionKey) return;
    this.selectionKey = key;
    if (key === this.pinnedKey) return;
    this.pinnedKey = null;
    const items = selectedItems(elements, appState);
    if (!items.length) {
      this.ctx.setSelection?.(null);
      return;
    }
    this.ctx.setSelection?.({ file: this.current, elements: items, label: chipLabel(this.current, items, this.t) });
  }

  // --- changes on disk -------------------------------------------------------------

  update(files, changes) {
    if (this.destroyed) return;
    let listChanged = false;
    let currentChange = null;
    for (const change of changes || []) {
      if (!isDrawing(change.path) || change.binary) continue;
      if (change.deleted) {
        listChanged = this.drawings.delete(change.path) || listChanged;
        if (change.path === this.current) currentChange = change;
        continue;
      }
      if (!this.drawings.has(change.path)) listChanged = true;
      this.drawings.set(change.path, change.content ?? null);
      if (change.path === this.current) currentChange = change;
    }
    if (currentChange) this.onCurrentChanged(currentChange);
    else if (!this.current && this.drawings.size && this.reactRoot) this.open(this.pickInitialFile());
    if (listChanged && this.api) this.render();
  }

  onCurrentChanged(change) {
    if (change.deleted) {
      clearTimeout(this.saveTimer);
      this.saveTimer = null;
      const gone = this.current;
      const next = this.sortedDrawings()[0];
      this.current = null;
      this.synced = null;
      this.api = null;
      this.initialData = null;
      this.render();
      if (next) {
        this.open(next).then(() => this.showNotice(() => this.t("notice.deleted", { file: gone, next })));
      } else {
        this.showNoDrawing(gone);
      }
      return;
    }
    if (change.origin === "self") return; // our own save coming back
    const text = change.content;
    if (typeof text !== "string") {
      this.drawings.set(change.path, null);
      this.readText(change.path).then((t) => this.applyExternal(t));
      return;
    }
    this.applyExternal(text);
  }

  async applyExternal(text) {
    if (!this.synced || this.synced.text === text || this.recentWrites.includes(text)) return;
    let doc;
    try {
      doc = parseDrawing(text);
    } catch (err) {
      // A half-written file, most likely; the next write will fix it.
      const file = this.current;
      this.showNotice(() => this.t("notice.halfWritten", { file, problem: this.problemText(err) }));
      return;
    }
    if (!this.api) {
      // Not mounted yet (or the last version could not be shown): start over.
      this.drawings.set(this.current, text);
      await this.open(this.current);
      return;
    }
    await this.ready;
    const api = this.api;
    const { restoreElements, CaptureUpdateAction } = this.lib;
    const remote = restoreElements(doc.elements, null, { repairBindings: true, refreshDimensions: false });
    const local = api.getSceneElementsIncludingDeleted();
    const versions = this.synced.versions;
    // The person's strokes not saved yet win over the file for those elements
    // only; everything else is what the file now says.
    const pending = local.filter((e) => versions.get(e.id) !== versionOf(e));
    let elements = remote;
    if (pending.length) {
      const mine = new Map(pending.map((e) => [e.id, e]));
      elements = remote.map((e) => mine.get(e.id) || e);
      const present = new Set(remote.map((e) => e.id));
      for (const e of pending) if (!present.has(e.id) && !e.isDeleted) elements.push(e);
    }
    api.updateScene({
      elements,
      appState: pick(doc.appState, ["viewBackgroundColor", "gridSize", "gridStep"]),
      captureUpdate: CaptureUpdateAction.NEVER,
    });
    this.stats.externalApplied += 1;
    if (doc.files && typeof doc.files === "object") {
      const known = api.getFiles();
      const fresh = Object.values(doc.files).filter((f) => f && f.id && !known[f.id]);
      if (fresh.length) api.addFiles(fresh);
    }
    this.synced = { path: this.current, text, doc, hash: null, versions: new Map() };
    this.rebaseline();
    // What Excalidraw adjusts on its own after this (text re-measured when a
    // font arrives) is not the person's edit: it is not written back.
    this.userTouched = false;
    if (pending.length) {
      for (const e of pending) this.synced.versions.set(e.id, "pending");
      this.synced.hash = null;
      this.userTouched = true;
      this.scheduleSave();
    }
    this.hideNotice();
    // Labels may have changed under a selection.
    this.selectionKey = "";
    this.updateSelection(api.getSceneElementsIncludingDeleted(), api.getAppState());
  }

  // --- actions ---------------------------------------------------------------------

  async runAction(actionId, params = {}) {
    switch (actionId) {
      case "navigate-to":
        return this.actionNavigate(params);
      case "describe-view":
        return this.actionDescribe();
      case "capture-screenshot":
        return this.actionCapture(params);
      case "zoom-to-fit":
        return this.actionZoom(params);
      default:
        return { success: false, message: `${actionId} is not supported by the draw viewer` };
    }
  }

  async whenShowing() {
    if (!this.lib) await loadLibrary();
    if (!this.current) throw new Error("No drawing is open: the workspace has no .excalidraw file yet");
    if (!this.api && !this.synced) throw new Error(`${this.current} is not a valid drawing, so nothing is shown`);
    await this.ready;
    if (!this.api) throw new Error("the canvas is not ready");
    return this.api;
  }

  async actionNavigate(params) {
    const file = normalizePath(params.file);
    if (!file) return { success: false, message: "navigate-to needs {file}" };
    if (!isDrawing(file)) return { success: false, message: `${file} is not a ${EXT} file` };
    if (!this.drawings.has(file)) {
      const known = this.sortedDrawings();
      return {
        success: false,
        message: `no drawing ${file} in the workspace; drawings: ${known.length ? known.join(", ") : "none"}`,
      };
    }
    if (!this.lib) await loadLibrary();
    if (file !== this.current || !this.api) await this.open(file);
    if (!Array.isArray(params.elementIds) || !params.elementIds.length) {
      return { success: true, message: `Showing ${file}`, data: { file } };
    }
    return this.showElements(file, params.elementIds);
  }

  /** A change's "Show" (its locate is {file, elementIds}): those elements selected and in view. */
  async showElements(file, ids) {
    const api = await this.whenShowing();
    const { selected, missing } = await selectAndZoom(api, ids);
    const message = `Showing ${file}` + (selected.length ? ` with ${selected.length} element(s) selected` : "") +
      (missing.length ? `; not in it: ${missing.join(", ")}` : "");
    return { success: true, message, data: { file, selected, ...(missing.length ? { missing } : {}) } };
  }

  async actionDescribe() {
    const api = await this.whenShowing();
    const appState = api.getAppState();
    const all = api.getSceneElements();
    const zoom = appState.zoom.value;
    const [x1, y1, x2, y2] = this.lib.getVisibleSceneBounds(appState);
    const visible = { x: round(x1), y: round(y1), width: round(x2 - x1), height: round(y2 - y1) };
    const inView = all.filter((e) => {
      const [ex1, ey1, ex2, ey2] = this.lib.getCommonBounds([e]);
      return ex2 >= x1 && ex1 <= x2 && ey2 >= y1 && ey1 <= y2;
    });
    const selected = selectedItems(api.getSceneElementsIncludingDeleted(), appState);
    const data = {
      file: this.current,
      visible,
      zoom: round(zoom, 3),
      selected,
      elements: all.length,
      inView: inView.filter((e) => !(e.type === "text" && e.containerId)).map((e) => e.id),
      drawings: this.sortedDrawings(),
    };
    const message =
      `${this.current}: ${all.length} element${all.length === 1 ? "" : "s"}, ` +
      `view x ${visible.x}…${visible.x + visible.width}, y ${visible.y}…${visible.y + visible.height} at ${Math.round(zoom * 100)} % zoom, ` +
      (selected.length ? `${selected.length} selected (${selected.map((s) => s.id).join(", ")})` : "nothing selected");
    return { success: true, message, data };
  }

  /**
   * The drawing on screen and the elements an action names (every element
   * when it names none); `failure` is the answer when that leaves nothing,
   * `emptyNote` what an empty drawing's answer adds.
   */
  async actionTargets(params, emptyNote = "") {
    const api = await this.whenShowing();
    const { elements, missing } = resolveTargets(api, params.elementIds);
    const failure = elements.length ? null : {
      success: false,
      message: params.elementIds ? `none of the elements ${missing.join(", ")} is in ${this.current}` : `${this.current} is empty${emptyNote}`,
    };
    return { api, elements, missing, failure };
  }

  async actionCapture(params) {
    const { api, elements, missing, failure } = await this.actionTargets(params, ": nothing to capture");
    if (failure) return failure;
    const padding = typeof params.padding === "number" && params.padding >= 0 ? Math.min(params.padding, 1000) : 20;
    const appState = api.getAppState();
    let size = { width: 0, height: 0 };
    const blob = await this.lib.exportToBlob({
      elements,
      files: api.getFiles(),
      mimeType: "image/png",
      exportPadding: padding,
      appState: {
        exportBackground: true,
        exportWithDarkMode: false,
        exportEmbedScene: false,
        viewBackgroundColor: appState.viewBackgroundColor || "#ffffff",
      },
      // Sharp enough to read small labels, never larger than 2400 px a side.
      getDimensions: (width, height) => {
        const scale = Math.max(0.25, Math.min(2, 2400 / Math.max(width, height, 1)));
        size = { width: Math.round(width * scale), height: Math.round(height * scale) };
        return { ...size, scale };
      },
    });
    const dataUrl = await blobToDataUrl(blob);
    const name = stem(this.current.split("/").pop()).replace(/[^A-Za-z0-9._-]+/g, "-").replace(/^[^A-Za-z0-9]+/, "") || "drawing";
    const saved = await this.ctx.saveCapture(name, dataUrl);
    if (!saved || !saved.path) {
      const why = saved && saved.error ? saved.error.message : "no path returned";
      return { success: false, message: `the PNG could not be stored: ${why}` };
    }
    const data = { path: saved.path, file: this.current, width: size.width, height: size.height, elements: elements.length };
    if (missing.length) data.missing = missing;
    return {
      success: true,
      message: `Saved ${saved.path} (${size.width}×${size.height} px, ${elements.length} elements${missing.length ? `; not found: ${missing.join(", ")}` : ""})`,
      data,
    };
  }

  async actionZoom(params) {
    const { api, elements, missing, failure } = await this.actionTargets(params);
    if (failure) return failure;
    await zoomTo(api, elements, params.elementIds ? 2 : 1);
    const view = await this.actionDescribe();
    return {
      success: true,
      message: `Showing ${elements.length} element${elements.length === 1 ? "" : "s"} at ${Math.round(view.data.zoom * 100)} % zoom` +
        (missing.length ? `; not found: ${missing.join(", ")}` : ""),
      data: { zoom: view.data.zoom, visible: view.data.visible, ...(missing.length ? { missing } : {}) },
    };
  }

  // --- overlays --------------------------------------------------------------------

  /** `text` is a function, so that a switch of language can say it again. */
  showNotice(text) {
    this.noticeText = text;
    this.notice.textContent = text();
    this.notice.hidden = false;
    clearTimeout(this.noticeTimer);
    this.noticeTimer = setTimeout(() => this.hideNotice(), 8000);
  }

  hideNotice() {
    this.notice.hidden = true;
  }

  /** The empty state; `deleted` names the drawing that was just deleted. */
  showNoDrawing(deleted = "") {
    this.showEmpty(() => [
      this.t("empty.title"),
      `${deleted ? `${this.t("empty.deleted", { file: deleted })} ` : ""}${this.t("empty.text")}`,
      { label: this.t("empty.start"), onClick: () => this.createDrawing() },
    ]);
  }

  /** What a bad file's error says, in the page's language. */
  problemText(err) {
    return err && err.problem ? this.t(err.problem, err.params || {}) : String(err && err.message ? err.message : err);
  }

  /** `texts()` gives [title, text, button or null]; called again after a switch of language. */
  showEmpty(texts) {
    this.emptyTexts = texts;
    const [title, text, button] = texts();
    this.empty.replaceChildren();
    const h = document.createElement("h2");
    h.textContent = title;
    const p = document.createElement("p");
    p.textContent = text;
    this.empty.append(h, p);
    if (button) {
      const b = document.createElement("button");
      b.type = "button";
      b.textContent = button.label;
      b.addEventListener("click", button.onClick);
      this.empty.append(b);
    }
    this.empty.hidden = false;
  }

  hideEmpty() {
    this.empty.hidden = true;
  }

  relabel() {
    if (this.destroyed) return;
    if (!this.empty.hidden && this.emptyTexts) this.showEmpty(this.emptyTexts);
    if (!this.notice.hidden && this.noticeText) this.notice.textContent = this.noticeText();
    this.controlNames.rename();
    this.selectionKey = "";
    if (this.api) this.updateSelection(this.api.getSceneElementsIncludingDeleted(), this.api.getAppState());
    this.render();
  }

  destroy() {
    if (this.destroyed) return;
    this.flushSave();
    this.destroyed = true;
    clearTimeout(this.noticeTimer);
    this.stopLocale?.();
    window.removeEventListener("pagehide", this.onPageHide);
    this.themeObserver.disconnect();
    this.controlNames.stop();
    this.darkQuery?.removeEventListener?.("change", this.onThemeChange);
    const root = this.reactRoot;
    this.reactRoot = null;
    this.api = null;
    // Unmount after the pending save has read the scene.
    this.saving.finally(() => {
      root?.unmount();
      this.root.remove();
    });
  }
}

// showPins, renderPins, pinPlace, capturePin, revealPin, reveal (pins.js)
Object.assign(DrawViewer.prototype, pinMethods);

export default {
  capabilities: ["annotate", "follow"],

  mount(element, ctx) {
    return new DrawViewer(element, ctx);
  },

  extractContext(selection) {
    return contextFor(selection);
  },

  resolveItems(files) {
    return (files || [])
      .filter((f) => isDrawing(f.path) && !f.deleted)
      .map((f) => f.path)
      .sort(compareDrawings)
      .map((path, index) => ({ path, label: stem(path.split("/").pop()), index, metadata: { kind: "drawing" } }));
  },
};
