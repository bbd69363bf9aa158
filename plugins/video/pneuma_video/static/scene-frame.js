// One scene in its own frame: the stage document (routes.py) sandboxed with
// allow-scripts alone, so the scene's script runs in an opaque origin that
// cannot reach the page. The player talks to it with postMessage only: it
// posts the fragment, then seeks it through the timeline runtime
// (runtime.js) and waits until the frame at that time is drawn.

import { h } from "/static/lib/viewer-helpers.js";
import { cjkFontFaces } from "./cjk-font.js";
import { inlineAssets } from "./assets.js";

export const STAGE_URL = "/api/video/stage";
// In a shared file (docs/sharing.md) there is no server to load the stage
// from: the frame gets the same document as srcdoc, its two scripts given
// the page's nonce (a srcdoc frame keeps the page's policy), still sandboxed
// with allow-scripts alone.
const SHARE = typeof window !== "undefined" ? window.pneumaShare : null;
const STAGE_SCRIPTS = [new URL("./runtime.js", import.meta.url).href, new URL("./stage.js", import.meta.url).href];
let sharedStage = null;

function sharedStageDocument() {
  if (!sharedStage) {
    const nonce = String(SHARE.nonce || "").replace(/[^\w+/=-]/g, "");
    sharedStage = Promise.all(STAGE_SCRIPTS.map((url) => fetch(url).then((r) => r.text()))).then((texts) => {
      const scripts = texts.map((text) => `<script nonce="${nonce}">${text.replace(/<\/script/gi, "<\\/script")}</script>`);
      return '<!doctype html><html><head><meta charset="utf-8"><style>html,body{margin:0;padding:0;overflow:hidden}'
        + `body{position:relative;width:1280px;height:720px;background:#000}</style>${scripts.join("")}</head><body></body></html>`;
    });
  }
  return sharedStage;
}
const SEEK_TIMEOUT_MS = 8000; // a scene that never answers (a stuck script) must not stop the player

export class SceneFrame {
  /**
   * @param scene the scene (composition.js) this frame shows
   * @param html the scene file's text
   * @param composition size, fps and background of the stage
   * @param onMessage (frame, message) for what the person does inside (pick, edit, key) and errors
   * @param assets the workspace files the scene names, with their URLs here ({path: url})
   */
  constructor(scene, html, composition, { onMessage, pointing, assets }) {
    this.scene = scene;
    this.html = html;
    // A new size, frame count or version of a file the scene uses makes a new frame.
    this.key = `${composition.width}x${composition.height}@${composition.fps}|${composition.background}|${scene.frames}`
      + `|${Object.values(assets).join("|")}`;
    this.onMessage = onMessage;
    this.errors = [];
    this.pending = new Map();
    this.nextId = 1;
    this.loadMessage = {
      type: "pneuma-video:load", html, width: composition.width, height: composition.height,
      background: composition.background, pointing,
    };
    this.configure = {
      type: "pneuma-video:configure", fps: composition.fps, duration: scene.frames / composition.fps,
      width: composition.width, height: composition.height,
    };
    this.iframe = h("iframe", {
      class: "video-scene-frame", sandbox: "allow-scripts", src: SHARE ? null : STAGE_URL, tabindex: "-1",
      title: scene.title || scene.id, width: String(composition.width), height: String(composition.height),
      "data-scene": scene.id, "data-file": scene.file,
    });
    this.loaded = new Promise((resolve) => { this.resolveLoaded = resolve; });
    this.fonts = cjkFontFaces(html).catch(() => "");
    this.markup = inlineAssets(html, (path) => assets[path] || null).catch(() => html);
    if (SHARE) sharedStageDocument().then((html) => { this.iframe.srcdoc = html; }, () => undefined);
  }

  post(message) {
    if (this.iframe.contentWindow) this.iframe.contentWindow.postMessage(message, "*");
  }

  /** A message whose source is this frame's window (the viewer checks). */
  handle(message) {
    switch (message.type) {
      case "pneuma-video:ready": // the runtime, once the stage document loaded
        Promise.all([this.fonts, this.markup]).then(([fonts, markup]) => {
          this.post(this.configure);
          this.post({ ...this.loadMessage, html: markup, fonts });
        });
        break;
      case "pneuma-video:loaded":
        this.resolveLoaded();
        break;
      case "pneuma-video:seeked": {
        const waiting = this.pending.get(message.id);
        if (waiting) waiting(message);
        break;
      }
      case "pneuma-video:error":
        if (message.error && typeof message.error === "object") {
          this.errors.push({ message: String(message.error.message || ""), line: Number(message.error.line) || null });
          this.onMessage(this, { type: "error" });
        }
        break;
      default:
        this.onMessage(this, message);
    }
  }

  /** Draw the frame at `t` seconds of the scene; resolves once it is drawn (or timed out). */
  async seek(t) {
    await Promise.race([this.loaded, delay(SEEK_TIMEOUT_MS)]);
    const id = this.nextId++;
    const answer = new Promise((resolve) => {
      this.pending.set(id, resolve);
      setTimeout(() => resolve({ timedOut: true }), SEEK_TIMEOUT_MS);
    });
    this.post({ type: "pneuma-video:seek", id, t });
    const result = await answer;
    this.pending.delete(id);
    return result;
  }

  setPointing(on) {
    this.loadMessage.pointing = on;
    this.post({ type: "pneuma-video:pointing", on });
  }

  mark(selector) {
    this.post({ type: "pneuma-video:mark", selector: selector || "" });
  }

  destroy() {
    for (const resolve of this.pending.values()) resolve({ timedOut: true });
    this.pending.clear();
    this.iframe.remove();
  }
}

function delay(ms) {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
