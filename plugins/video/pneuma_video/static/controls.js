// The player's controls: play/pause, frame steps, loop, the time and frame
// on show, and the timeline with every scene as a block the person scrubs.

import { h } from "/static/lib/viewer-helpers.js";
import { sceneAtFrame, seconds } from "./composition.js";

export class PlayerControls {
  constructor(player) {
    this.player = player;
    const t = (key) => player.t(key);
    this.playButton = h("button", { type: "button", class: "video-play", onclick: () => player.toggle() });
    this.backButton = h("button", { type: "button", class: "video-step-back", text: "‹",
      onclick: () => player.step(-1) });
    this.forwardButton = h("button", { type: "button", class: "video-step-forward", text: "›",
      onclick: () => player.step(1) });
    this.loopButton = h("button", { type: "button", class: "video-loop", text: "⟲",
      onclick: () => { player.loop = !player.loop; this.update(); } });
    this.timeLabel = h("span", { class: "video-time", "aria-live": "off" });
    this.frameLabel = h("span", { class: "video-frame" });
    this.sceneLabel = h("span", { class: "video-current-scene" });
    this.blocks = h("div", { class: "video-blocks" });
    this.ticks = h("div", { class: "video-pin-ticks" });
    this.head = h("div", { class: "video-playhead" });
    this.timeline = h("div", { class: "video-timeline", role: "slider", tabindex: "-1",
      onpointerdown: (event) => this.scrubStart(event),
      onpointermove: (event) => this.scrubMove(event),
      onpointerup: (event) => this.scrubEnd(event),
      onpointercancel: (event) => this.scrubEnd(event) },
    this.blocks, this.ticks, this.head);
    // The timeline above the buttons: the shell's own buttons float over the
    // panel's lower corners, and the button row leaves room for them.
    this.element = h("div", { class: "video-controls" }, this.timeline,
      h("div", { class: "video-buttons" }, this.backButton, this.playButton, this.forwardButton, this.loopButton,
        this.timeLabel, this.frameLabel, this.sceneLabel));
    this.label(t);
  }

  label(t) {
    this.backButton.title = t("controls.back");
    this.backButton.setAttribute("aria-label", t("controls.back"));
    this.forwardButton.title = t("controls.forward");
    this.forwardButton.setAttribute("aria-label", t("controls.forward"));
    this.loopButton.title = t("controls.loop");
    this.loopButton.setAttribute("aria-label", t("controls.loop"));
    this.timeline.setAttribute("aria-label", t("controls.timeline"));
  }

  /** The scene blocks (after video.json changed or the language switched). */
  render() {
    const player = this.player;
    const c = player.composition;
    this.label((key) => player.t(key));
    if (!c) return;
    this.blocks.replaceChildren(...c.scenes.map((scene) => h("div", {
      class: "video-block", "data-scene": scene.id, style: `flex-grow:${scene.frames}`,
      title: `${scene.title || scene.id} · ${seconds(scene.frames / c.fps)}`,
      "data-missing": player.frames.has(scene.id) ? null : "1",
    }, h("span", { text: scene.title || scene.id }))));
    this.update();
  }

  /** The playhead, the time, the frame and the play button. */
  update() {
    const player = this.player;
    const c = player.composition;
    this.playButton.textContent = player.playing ? "❚❚" : "▶";
    const playLabel = player.playing ? player.t("controls.pause") : player.t("controls.play");
    this.playButton.title = playLabel;
    this.playButton.setAttribute("aria-label", playLabel);
    this.playButton.dataset.playing = player.playing ? "1" : "0";
    this.loopButton.setAttribute("aria-pressed", player.loop ? "true" : "false");
    if (!c) return;
    const total = c.totalFrames;
    this.timeLabel.textContent = `${seconds(player.frame / c.fps)} / ${seconds(total / c.fps)}`;
    this.frameLabel.textContent = player.t("controls.frame", { frame: player.frame, total });
    this.frameLabel.dataset.frame = String(player.frame);
    const { scene } = sceneAtFrame(c, player.frame);
    this.sceneLabel.textContent = scene.title || scene.id;
    this.head.style.left = `${(player.frame / Math.max(total - 1, 1)) * 100}%`;
    this.timeline.setAttribute("aria-valuenow", String(player.frame));
    this.timeline.setAttribute("aria-valuemax", String(total - 1));
    this.timeline.setAttribute("aria-valuetext", this.timeLabel.textContent);
  }

  /** Ticks on the timeline at the pins' times. */
  drawTicks(pins) {
    const c = this.player.composition;
    if (!c) return;
    this.ticks.replaceChildren(...pins.filter((pin) => Number.isFinite(pin.selection.frame)).map((pin) => h("span", {
      class: "video-pin-tick", "data-pin": String(pin.number), "data-status": pin.status || "open",
      style: `left:${(pin.selection.frame / Math.max(c.totalFrames - 1, 1)) * 100}%`, text: String(pin.number),
    })));
  }

  frameAtPointer(event) {
    const c = this.player.composition;
    const box = this.blocks.getBoundingClientRect();
    const share = Math.min(Math.max((event.clientX - box.left) / Math.max(box.width, 1), 0), 1);
    return Math.round(share * (c.totalFrames - 1));
  }

  scrubStart(event) {
    if (!this.player.composition || event.button !== 0) return;
    this.scrubbing = true;
    this.timeline.setPointerCapture(event.pointerId);
    this.player.pause();
    this.player.goTo(this.frameAtPointer(event));
  }

  scrubMove(event) {
    if (this.scrubbing) this.player.goTo(this.frameAtPointer(event));
  }

  scrubEnd(event) {
    if (!this.scrubbing) return;
    this.scrubbing = false;
    if (this.timeline.hasPointerCapture(event.pointerId)) this.timeline.releasePointerCapture(event.pointerId);
  }
}
