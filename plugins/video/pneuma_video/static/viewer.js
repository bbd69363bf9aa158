// The video mode's player (docs/video.md). video.json's scenes play one
// after another on one timeline; each scene is in a sandboxed frame of its
// own (scene-frame.js) whose time the player drives through the timeline
// runtime's seek, so the picture at a time is the one the export encodes.
// Playback at real speed asks for the frame the wall clock says and drops
// those a slow scene cannot draw in time; the scenes never see the clock.
//
// The instance answers the viewer contract (docs/viewer-contract.md) and the
// capabilities "annotate", "edit" and "follow" (pins.js, edit.js).

import { h, sharedStylesheet } from "/static/lib/viewer-helpers.js";
import { COMPOSITION_FILE, CompositionError, frameAt, parseComposition, sceneAtFrame, seconds } from "./composition.js";
import { SceneFrame } from "./scene-frame.js";
import { assetPaths } from "./assets.js";
import { PlayerControls } from "./controls.js";
import { actionMethods } from "./actions.js";
import { pinMethods, editMethods } from "./pins.js";
import { translator } from "./i18n.js";

export const MODE = "video";
const PLAYHEAD_KEY = "pneuma-video:playhead";
const stylesheet = sharedStylesheet(new URL("./viewer.css", import.meta.url).href, { "data-pneuma-video": "" });

export class VideoPlayer {
  constructor(root, ctx) {
    this.root = root;
    this.ctx = ctx;
    this.readOnly = !!ctx.readOnly;
    this.t = translator(() => ctx.locale || "en");
    this.composition = null;
    this.problem = null; // {message, key?}
    this.frames = new Map(); // scene id → SceneFrame
    this.noFrame = new Map(); // scene id → why it has no frame (syncFrames)
    this.frame = this.savedFrame(); // the playhead
    this.wanted = 0;
    this.drawn = null; // "frame@version" on screen
    this.version = 0;
    this.drawLoop = null;
    this.playing = false;
    this.loop = false;
    this.selection = null;
    this.pins = [];
    this.build();
    this.onMessage = (event) => this.receive(event);
    window.addEventListener("message", this.onMessage);
    this.resize = new ResizeObserver(() => this.fit());
    this.resize.observe(this.stageWrap);
    this.stopLocale = ctx.onLocaleChange ? ctx.onLocaleChange(() => this.relabel()) : null;
    this.load(ctx.files);
  }

  build() {
    this.errorBox = h("div", { class: "video-error", role: "alert", hidden: true });
    this.notice = h("div", { class: "video-notice", role: "status", hidden: true });
    this.stage = h("div", { class: "video-stage" });
    this.pinLayer = h("div", { class: "video-pin-layer" });
    this.stage.append(this.pinLayer);
    this.stageWrap = h("div", { class: "video-stage-wrap" }, this.stage);
    this.sceneList = h("ol", { class: "video-scene-list" });
    this.controls = new PlayerControls(this);
    this.root.replaceChildren(h("div", { class: "video-player", tabindex: "0", "data-readonly": this.readOnly ? "1" : null,
      onkeydown: (event) => this.key(event) },
    h("div", { class: "video-main" }, this.errorBox, this.notice, this.stageWrap, this.sceneList),
    this.controls.element));
    this.player = this.root.firstChild;
  }

  // --- files -----------------------------------------------------------------------
  fileText(path, files = this.ctx.files) {
    const file = (files || []).find((f) => f.path === path);
    return file && typeof file.content === "string" ? file.content : null;
  }

  load(files) {
    const text = this.fileText(COMPOSITION_FILE, files);
    try {
      if (text === null) throw Object.assign(new CompositionError(`${COMPOSITION_FILE} is missing`), { key: "error.missing" });
      this.composition = parseComposition(text);
      this.problem = null;
    } catch (error) {
      if (!(error instanceof CompositionError)) throw error;
      this.problem = { message: error.message, key: error.key || "error.invalid" };
    }
    this.showProblem();
    if (!this.composition) return;
    this.syncFrames(files);
    this.frame = Math.min(this.frame, this.composition.totalFrames - 1);
    this.controls.render();
    this.renderSceneList();
    this.fit();
    this.version += 1; // what is on screen may have changed: a draw under way is of the old frames
    this.goTo(this.frame);
  }

  showProblem() {
    const problem = this.problem;
    this.errorBox.hidden = !problem;
    if (problem) {
      const title = problem.key === "error.missing" ? this.t("error.missing") : this.t("error.invalid");
      this.errorBox.replaceChildren(h("strong", { text: title }), h("code", { text: problem.message }));
    }
  }

  /** One frame per scene: kept when its file and the stage are the same, made anew otherwise. */
  syncFrames(files) {
    const keep = new Map();
    this.noFrame = new Map(); // scene id → why it has no frame (its file is not there, or not text)
    for (const scene of this.composition.scenes) {
      const html = this.fileText(scene.file, files);
      if (html === null) this.noFrame.set(scene.id, (files || []).some((f) => f.path === scene.file) ? "scene.notText" : "scene.missing");
      const old = this.frames.get(scene.id);
      const fresh = html === null ? null : new SceneFrame(scene, html, this.composition, {
        onMessage: (frame, message) => this.fromScene(frame, message), pointing: !this.readOnly,
        assets: this.assetsOf(html, files),
      });
      if (old && fresh && old.html === fresh.html && old.key === fresh.key && old.scene.file === scene.file) {
        old.scene = scene;
        keep.set(scene.id, old);
        continue;
      }
      if (old) this.retire(old);
      if (fresh) {
        this.stage.insertBefore(fresh.iframe, this.pinLayer);
        keep.set(scene.id, fresh);
      }
    }
    for (const [id, frame] of this.frames) if (keep.get(id) !== frame) this.retire(frame);
    this.frames = keep;
  }

  /** The workspace files `html` names, each with its URL (which changes with the file). */
  assetsOf(html, files) {
    const paths = new Set((files || []).map((f) => f.path));
    return Object.fromEntries(assetPaths(html, (path) => paths.has(path)).map((path) => [path, this.ctx.contentUrl(path)]));
  }

  /** A replaced frame stays on screen until its successor has drawn the playhead (no flash). */
  retire(frame) {
    if (frame.iframe.classList.contains("current")) this.leaving = [...(this.leaving || []), frame];
    else frame.destroy();
  }

  update(files) {
    if (this.editing) {
      this.deferred = files;
      return;
    }
    this.load(files);
  }

  fit() {
    const c = this.composition;
    if (!c) return;
    const box = this.stageWrap.getBoundingClientRect();
    const scale = Math.max(0.05, Math.min(box.width / c.width, box.height / c.height) || 1);
    this.scale = scale;
    Object.assign(this.stage.style, { width: `${c.width}px`, height: `${c.height}px`, transform: `scale(${scale})`,
      left: `${Math.max(0, (box.width - c.width * scale) / 2)}px`, top: `${Math.max(0, (box.height - c.height * scale) / 2)}px` });
  }

  // --- the playhead ------------------------------------------------------------------
  /** Move the playhead to frame `n`; resolves once the latest frame asked for is drawn. */
  goTo(n) {
    if (!this.composition) return Promise.resolve();
    this.wanted = Math.min(Math.max(Math.round(n) || 0, 0), this.composition.totalFrames - 1);
    this.frame = this.wanted;
    this.controls.update();
    if (!this.drawLoop) this.drawLoop = this.drawWanted().finally(() => { this.drawLoop = null; });
    return this.drawLoop;
  }

  /** The playhead survives a reload of the person's tab (this session's
   * storage); a snapshot mount and the headless page neither read nor write it. */
  savedFrame() {
    try {
      return this.keepsPlace() ? Number(sessionStorage.getItem(PLAYHEAD_KEY)) || 0 : 0;
    } catch {
      return 0;
    }
  }

  keepsPlace() {
    return !this.readOnly && document.documentElement.dataset.client !== "headless";
  }

  async drawWanted() {
    // Until the frame asked for last is drawn from the frames as they are now.
    while (this.drawn !== `${this.wanted}@${this.version}`) {
      const n = this.wanted;
      const version = this.version;
      await this.draw(n);
      this.drawn = `${n}@${version}`;
    }
  }

  async draw(n) {
    const { scene, sceneTime } = sceneAtFrame(this.composition, n);
    const frame = this.frames.get(scene.id);
    if (frame) await frame.seek(sceneTime);
    for (const other of this.frames.values()) other.iframe.classList.toggle("current", other === frame);
    for (const old of this.leaving || []) old.destroy();
    this.leaving = [];
    if (!this.readOnly && this.ctx.setActiveFile && scene.file !== this.activeFile) {
      this.activeFile = scene.file; // the shell's title and describe-view name the scene on screen
      this.ctx.setActiveFile(scene.file);
    }
    this.stage.dataset.scene = scene.id;
    this.stage.dataset.missing = frame ? "" : this.t(this.noFrame.get(scene.id) || "scene.missing", { file: scene.file });
    this.stage.dataset.frame = String(n);
    if (this.keepsPlace()) {
      try {
        sessionStorage.setItem(PLAYHEAD_KEY, String(n));
      } catch { /* storage full or off: the playhead starts at 0 next time */ }
    }
    this.renderSceneList();
    this.drawPins();
    if (this.selection && this.selection.scene === scene.id && frame) frame.mark(this.selection.selector);
  }

  play() {
    if (!this.composition || this.playing) return;
    if (this.frame >= this.composition.totalFrames - 1) this.goTo(0);
    this.playing = true;
    this.clockStart = performance.now();
    this.frameStart = this.frame;
    this.controls.update();
    const tick = () => {
      if (!this.playing) return;
      const total = this.composition.totalFrames;
      let target = this.frameStart + Math.floor(((performance.now() - this.clockStart) / 1000) * this.composition.fps);
      if (target >= total) {
        if (this.loop) {
          this.clockStart = performance.now();
          this.frameStart = 0;
          target = 0;
        } else {
          this.goTo(total - 1);
          this.pause();
          return;
        }
      }
      if (!this.drawLoop && target !== this.frame) this.goTo(target); // a frame not drawn in time is dropped
      this.raf = requestAnimationFrame(tick);
    };
    this.raf = requestAnimationFrame(tick);
  }

  pause() {
    this.playing = false;
    cancelAnimationFrame(this.raf);
    this.controls.update();
  }

  toggle() {
    if (this.playing) this.pause();
    else this.play();
  }

  step(frames) {
    this.pause();
    return this.goTo(this.frame + frames);
  }

  key(event) {
    if (event.target instanceof HTMLElement && event.target.closest("input, textarea, [contenteditable]")) return;
    this.keyPressed(event.key, event.shiftKey, event);
  }

  keyPressed(key, shiftKey, event = null) {
    const second = Math.round(this.composition ? this.composition.fps : 30);
    const handlers = {
      " ": () => this.toggle(),
      ArrowLeft: () => this.step(shiftKey ? -second : -1),
      ArrowRight: () => this.step(shiftKey ? second : 1),
      Home: () => this.step(-this.frame),
      End: () => this.step(Infinity),
    };
    if (!handlers[key]) return;
    if (event) event.preventDefault();
    handlers[key]();
  }

  /** What is on screen at the playhead, in the agent's words. */
  playhead() {
    const c = this.composition;
    const { scene, sceneTime } = sceneAtFrame(c, this.frame);
    return { time: round3(this.frame / c.fps), frame: this.frame, scene: scene.id, sceneTitle: scene.title,
      file: scene.file, sceneTime: round3(sceneTime) };
  }

  // --- the scene list ----------------------------------------------------------------
  renderSceneList() {
    const c = this.composition;
    if (!c) return;
    const current = sceneAtFrame(c, this.frame).scene;
    this.sceneList.setAttribute("aria-label", this.t("scenes.label"));
    this.sceneList.replaceChildren(...c.scenes.map((scene) => h("li", {},
      h("button", { type: "button", class: "video-scene-item", "data-scene": scene.id,
        "aria-current": scene === current ? "true" : null, "data-missing": this.frames.has(scene.id) ? null : "1",
        title: this.frames.has(scene.id) ? scene.file : this.t(this.noFrame.get(scene.id) || "scene.missing", { file: scene.file }),
        onclick: () => {
          this.pause();
          this.goTo(scene.startFrame);
          this.player.focus({ preventScroll: true }); // the list is redrawn: keep the keys working
        } },
      h("span", { class: "video-scene-title", text: scene.title || scene.id }),
      h("span", { class: "video-scene-time", text: `${seconds(scene.startFrame / c.fps)} · ${seconds(scene.frames / c.fps)}` })))));
  }

  relabel() {
    this.showProblem();
    this.controls.render();
    this.renderSceneList();
  }

  // --- messages from the scenes --------------------------------------------------------
  receive(event) {
    const message = event.data;
    if (!message || typeof message !== "object" || typeof message.type !== "string") return;
    for (const frame of [...this.frames.values(), ...(this.leaving || [])]) {
      if (event.source === frame.iframe.contentWindow) {
        frame.handle(message);
        return;
      }
    }
  }

  fromScene(frame, message) {
    if (message.type === "pneuma-video:key") this.keyPressed(String(message.key), !!message.shiftKey);
    else if (message.type === "pneuma-video:pick") this.picked(frame, message);
    else if (message.type === "pneuma-video:edit-start") this.editStarted(frame);
    else if (message.type === "pneuma-video:edit") this.edited(frame, message);
  }

  picked(frame, message) {
    if (this.readOnly) return;
    this.pause();
    const c = this.composition;
    const scene = frame.scene;
    const text = String(message.text || "").slice(0, 300);
    const tag = String(message.tag || "").slice(0, 40);
    const time = this.frame / c.fps;
    this.selection = {
      file: scene.file, scene: scene.id, sceneTitle: scene.title, time: round3(time), frame: this.frame,
      sceneTime: round3((this.frame - scene.startFrame) / c.fps), selector: String(message.selector || "").slice(0, 500),
      tag, text, box: cleanBox(message.box),
      label: `${scene.title || scene.id} · ${seconds(time)} · ${tag}${text ? ` “${text.slice(0, 40)}”` : ""}`,
    };
    this.ctx.setSelection(this.selection);
  }

  clearSelection() {
    this.selection = null;
    for (const frame of this.frames.values()) frame.mark("");
  }

  /** Why `scene` has no frame, in the agent's words (English). */
  whyNoFrame(scene) {
    return this.noFrame.get(scene.id) === "scene.notText" ? `${scene.file} is not a text file (a scene is HTML)`
      : `${scene.file} is missing`;
  }

  /** Files with problems the person should see (the follow capability). */
  problems() {
    const found = {};
    if (this.problem) found[COMPOSITION_FILE] = this.problem.message;
    for (const frame of this.frames.values()) {
      if (frame.errors.length) found[frame.scene.file] = `Script error: ${frame.errors[0].message}`;
    }
    if (this.composition) {
      for (const scene of this.composition.scenes) if (!this.frames.has(scene.id)) found[scene.file] = this.whyNoFrame(scene);
    }
    return found;
  }

  async reveal(path) {
    if (path === COMPOSITION_FILE) return !!this.composition;
    const scene = this.composition && this.composition.scenes.find((s) => s.file === path);
    if (!scene) return false;
    const { scene: current } = sceneAtFrame(this.composition, this.frame);
    if (current !== scene) {
      this.pause();
      await this.goTo(scene.startFrame);
    }
    return true;
  }

  destroy() {
    this.pause();
    window.removeEventListener("message", this.onMessage);
    this.resize.disconnect();
    if (this.stopLocale) this.stopLocale();
    for (const frame of this.frames.values()) frame.destroy();
    this.frames.clear();
    this.root.replaceChildren();
  }
}

Object.assign(VideoPlayer.prototype, actionMethods, pinMethods, editMethods);

export function round3(value) {
  return Math.round(value * 1000) / 1000;
}

function cleanBox(box) {
  const n = (v) => (Number.isFinite(Number(v)) ? Math.round(Number(v)) : 0);
  return box && typeof box === "object" ? { x: n(box.x), y: n(box.y), width: n(box.width), height: n(box.height) } : null;
}

function escapeAttr(value) {
  return String(value).replace(/&/g, "&amp;").replace(/"/g, "&quot;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
}

function escapeText(value) {
  return String(value).replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
}

export { frameAt };

export default {
  capabilities: ["annotate", "edit", "follow"],

  async mount(element, ctx) {
    await stylesheet.acquire();
    const viewer = new VideoPlayer(element, ctx);
    return {
      update: (files, changes) => viewer.update(files, changes),
      runAction: (id, params) => viewer.runAction(id, params),
      clearSelection: () => viewer.clearSelection(),
      showPins: (pins) => viewer.showPins(pins),
      capturePin: (pin) => viewer.capturePin(pin),
      revealPin: (pin) => viewer.revealPin(pin),
      reveal: (path) => viewer.reveal(path),
      problems: () => viewer.problems(),
      destroy: () => {
        viewer.destroy();
        stylesheet.release();
      },
      viewer, // for tests and the console
    };
  },

  extractContext(selection) {
    if (!selection) return "";
    const attrs = [`mode="${MODE}"`, `file="${escapeAttr(selection.file || "")}"`];
    for (const [name, key] of [["scene", "scene"], ["time", "time"], ["scene-time", "sceneTime"], ["frame", "frame"],
      ["selector", "selector"], ["tag", "tag"]]) {
      if (selection[key] !== undefined && selection[key] !== null && selection[key] !== "") attrs.push(`${name}="${escapeAttr(selection[key])}"`);
    }
    return `<viewer-context ${attrs.join(" ")}>${escapeText(String(selection.text ?? "").slice(0, 500))}</viewer-context>`;
  },

  resolveItems(files) {
    const text = (files || []).find((f) => f.path === COMPOSITION_FILE);
    try {
      const c = parseComposition(text ? text.content : "");
      return c.scenes.map((scene) => ({ path: scene.file, label: scene.title || scene.id, index: scene.index }));
    } catch {
      return [];
    }
  },
};
