// Review pins at a time (the "annotate" capability) and edit in place of a
// scene's text (the "edit" capability), for the player (viewer.js).
// A pin is the person's pick at a frame: a tick on the timeline at its
// time, and a numbered marker on the stage while its scene is on screen.
// An edit made on the paused stage is written to the scene's file through
// ctx.editFile, changing only that text node (source-edit.js).

import { h } from "/static/lib/viewer-helpers.js";
import { htmlTextNodes, replaceHtmlText } from "/static/lib/source-edit.js";
import { sceneAtFrame } from "./composition.js";
import { dataUrl } from "./data-url.js";

const MARKER_LIMIT = 100;

export const pinMethods = {
  showPins(pins) {
    this.pins = (Array.isArray(pins) ? pins : []).filter((pin) => pin && pin.selection && typeof pin.selection === "object");
    this.controls.drawTicks(this.pins);
    this.drawPins();
  },

  drawPins() {
    if (!this.composition) return;
    const { scene } = sceneAtFrame(this.composition, this.frame);
    const markers = (this.pins || []).filter((pin) => pin.selection.scene === scene.id && pin.selection.box)
      .slice(0, MARKER_LIMIT)
      .map((pin) => h("span", {
        class: "video-pin-marker", "data-pin": String(pin.number), "data-status": pin.status || "open",
        style: `left:${Number(pin.selection.box.x) || 0}px;top:${Number(pin.selection.box.y) || 0}px`,
      }, String(pin.number)));
    this.pinLayer.replaceChildren(...markers);
  },

  /** The pinned frame as the export draws it (GET /api/video/frame, headless: this
   * page cannot draw the scene's sandboxed frame), or null (a shared file, no server). */
  async capturePin(pin) {
    const time = Number(pin && pin.selection && pin.selection.time);
    if (this.readOnly || !Number.isFinite(time)) return null;
    try { // a new URL each time: the scene may have changed since the last picture at this time
      return await dataUrl(`/api/video/frame?time=${time}&at=${Date.now()}`);
    } catch {
      return null; // no picture; the pin's text still goes
    }
  },

  async revealPin(pin) {
    const selection = pin && pin.selection;
    if (!selection || !this.composition || !Number.isFinite(Number(selection.frame))) return false;
    this.pause();
    await this.goTo(Number(selection.frame));
    const frame = this.frames.get(selection.scene);
    if (frame) frame.mark(selection.selector);
    return true;
  },
};

export const editMethods = {
  say(text) {
    this.notice.hidden = false;
    this.notice.textContent = text;
    clearTimeout(this.noticeTimer);
    this.noticeTimer = setTimeout(() => { this.notice.hidden = true; }, 6000);
  },

  editStarted() {
    this.pause();
    this.editing = true;
    this.stageWrap.setAttribute("data-pneuma-busy", "edit");
  },

  async edited(frame, message) {
    try {
      if (message.cancelled || message.newText === message.oldText) return;
      const written = await this.writeEdit(frame.scene.file, Number(message.index), String(message.oldText),
        String(message.newText));
      // The frame shows the edited text already: it stands for the file as written, so a later
      // change back to the old text (the agent's, or an undo) is a change that redraws it.
      if (written !== null) frame.html = written;
    } finally {
      this.editing = false;
      this.stageWrap.removeAttribute("data-pneuma-busy");
      const deferred = this.deferred;
      this.deferred = null;
      if (deferred) this.load(deferred);
    }
  },

  async writeEdit(path, index, oldText, newText) {
    const source = this.fileText(path);
    const node = source === null ? null : htmlTextNodes(source)[index];
    if (!node || node.text !== oldText) {
      // The text on the stage is not the file's (the scene's script wrote it): nothing to map it to.
      this.say(this.t("edit.unmapped"));
      this.load(this.ctx.files);
      return null;
    }
    if (!newText.trim()) {
      this.say(this.t("edit.empty"));
      this.load(this.ctx.files);
      return null;
    }
    const text = replaceHtmlText(source, index, newText);
    const answer = await this.ctx.editFile(path, text, { base: source });
    if (answer && answer.ok) return text;
    this.say(this.t("edit.failed", { message: (answer && answer.message) || "" }));
    return null;
  },
};
