// The viewer actions the agent calls (manifest viewerApi.actions): what they
// answer is English, for the agent (docs/viewer-contract.md, "Language").

import { fetchJson } from "/static/lib/viewer-helpers.js";
import { findScene, frameAt, sceneAtFrame } from "./composition.js";

const CAPTURE_TOOL = "/api/tools/capture_frame";

function round3(value) {
  return Math.round(value * 1000) / 1000;
}

function sceneLabel(scene) {
  return `scene ${scene.index + 1} “${scene.title || scene.id}” (${scene.file})`;
}

export const actionMethods = {
  async runAction(actionId, params = {}) {
    if (this.problem || !this.composition) {
      // The page keeps showing the last composition that played; the agent must fix the file.
      return { success: false, message: `video.json cannot be played: ${this.problem ? this.problem.message : "it is missing"}` };
    }
    switch (actionId) {
      case "navigate-to":
        return this.navigateTo(params || {});
      case "describe-view":
        return this.describeView();
      case "capture-frame":
        return this.captureFrame(params || {});
      case "ui:play":
        return this.setPlaying(params || {});
      default:
        return { success: false, message: `'${actionId}' is not an action of the video player` };
    }
  },

  /** The frame the params name: {scene?, time?}; time counts from the scene's start with a scene. */
  frameOf(params) {
    const c = this.composition;
    const time = params.time === undefined || params.time === null || params.time === "" ? 0 : Number(params.time);
    if (!Number.isFinite(time) || time < 0) return { error: `time must be a number of seconds ≥ 0, not ${JSON.stringify(params.time)}` };
    if (params.scene !== undefined && params.scene !== null && params.scene !== "") {
      const scene = findScene(c, params.scene);
      if (!scene) {
        return { error: `No scene '${params.scene}'; the scenes are ${c.scenes.map((s) => s.id).join(", ")}` };
      }
      return { frame: scene.startFrame + Math.min(Math.round(time * c.fps), scene.frames - 1) };
    }
    return { frame: frameAt(c, time) };
  },

  async navigateTo(params) {
    const { frame, error } = this.frameOf(params);
    if (error) return { success: false, message: error };
    this.pause();
    await this.goTo(frame);
    const where = this.playhead();
    const { scene } = sceneAtFrame(this.composition, frame);
    const errors = this.frames.get(scene.id) ? this.frames.get(scene.id).errors : [];
    const missing = this.frames.has(scene.id) ? "" : ` ${this.whyNoFrame(scene)}.`;
    const thrown = errors.length ? ` The scene's script threw: ${errors[0].message}` : "";
    return {
      success: true,
      message: `Showing ${where.time} s (frame ${frame}), ${sceneLabel(scene)} at ${where.sceneTime} s.${missing}${thrown}`,
      data: { ...where, errors },
    };
  },

  describeView() {
    const c = this.composition;
    const where = this.playhead();
    const scenes = c.scenes.map((scene) => ({
      id: scene.id, title: scene.title, file: scene.file, start: round3(scene.startFrame / c.fps),
      duration: round3(scene.frames / c.fps), frames: scene.frames, missing: !this.frames.has(scene.id),
      errors: this.frames.get(scene.id) ? this.frames.get(scene.id).errors : [],
    }));
    const selection = this.selection ? { scene: this.selection.scene, time: this.selection.time,
      selector: this.selection.selector, tag: this.selection.tag, text: this.selection.text } : null;
    const duration = round3(c.totalFrames / c.fps);
    return {
      success: true,
      message: `“${c.title}”, ${c.width}×${c.height} at ${c.fps} fps, ${duration} s (${c.totalFrames} frames), `
        + `${c.scenes.length} scenes. The playhead is at ${where.time} s (frame ${where.frame}) in `
        + `${sceneLabel(sceneAtFrame(c, where.frame).scene)}; ${this.playing ? "playing" : "paused"}`
        + `${this.loop ? ", looping" : ""}.${selection ? ` Selected: ${selection.tag} ${selection.selector}.` : ""}`,
      data: { title: c.title, width: c.width, height: c.height, fps: c.fps, duration, totalFrames: c.totalFrames,
        scenes, playhead: where, playing: this.playing, loop: this.loop, selection },
    };
  },

  /** Seek the player, then save that frame as a PNG: the capture_frame tool
   * draws it with the same runtime and seek (a scene's frame is another
   * origin, which this page cannot draw itself). */
  async captureFrame(params) {
    const time = params.time === undefined || params.time === null || params.time === "" ? this.frame / this.composition.fps : Number(params.time);
    const { frame, error } = this.frameOf({ time });
    if (error) return { success: false, message: error };
    this.pause();
    await this.goTo(frame);
    const args = { time: frame / this.composition.fps };
    if (params.output) args.output = String(params.output);
    let answer;
    try {
      answer = await fetchJson(CAPTURE_TOOL, { method: "POST", json: args });
    } catch (failure) {
      return { success: false, message: `The frame at ${round3(args.time)} s was not captured: ${failure.message}` };
    }
    const result = answer && typeof answer === "object" && answer.result && typeof answer.result === "object" ? answer.result : answer;
    const file = result && (result.file || result.output || result.path);
    return {
      success: true,
      message: `Saved frame ${frame} (${round3(args.time)} s) as ${file}`,
      data: { ...(result || {}), file, time: round3(args.time), frame, width: this.composition.width, height: this.composition.height },
    };
  },

  setPlaying(params) {
    const playing = params.playing === true || params.playing === "true";
    if (playing) this.play();
    else this.pause();
    return { success: true, message: playing ? "Playing" : `Paused at ${this.playhead().time} s`, data: this.playhead() };
  },
};
