// The video mode's timeline runtime: loaded (as a classic script, before the
// scene's own markup) inside each scene's frame, by the player viewer and by
// the export's headless page alike, so a frame at a given time is the same
// picture in both (docs/video.md, "The time rules").
//
// Time is the host's. A scene never moves by the wall clock: every CSS
// animation and transition is paused and its currentTime set from the scene
// time (Web Animations API), and a scene's script animates only through
// `pneuma.onFrame((t, info) => …)`, t in seconds since the scene's start,
// info = {frame, fps, duration, width, height}.
//
// The scene document the host builds: <head> holds this script (with
// data-fps, data-duration, data-width, data-height on its tag, or a
// `configure` later), <body> is the stage of width × height px holding the
// scene's fragment.
//
// To the host:
// - a direct handle (same-origin pages, the export): `await pneuma.seek(t)`,
//   `pneuma.duration`, `pneuma.configure({fps, duration, width, height})`,
//   `pneuma.errors` (what the scene threw: {message, line, column, source}).
// - messages (a frame sandboxed without same-origin): the parent posts
//   {type: "pneuma-video:seek", id, t} and gets {type: "pneuma-video:seeked",
//   id, t, frame, errors}; {type: "pneuma-video:configure", …} configures.
//   The frame posts {type: "pneuma-video:ready", duration, errors} once
//   loaded and {type: "pneuma-video:error", error} for each error thrown.
(function installPneumaRuntime() {
  "use strict";
  if (window.pneuma && window.pneuma.seek) return; // loaded twice: keep the first
  const script = document.currentScript;
  const data = (script && script.dataset) || {};
  const number = (value, fallback) => {
    const n = Number(value);
    return Number.isFinite(n) && n > 0 ? n : fallback;
  };
  const config = {
    fps: number(data.fps, 30),
    duration: number(data.duration, 0),
    width: number(data.width, 1280),
    height: number(data.height, 720),
  };
  const callbacks = [];
  const errors = [];
  // Every animation seen, with the scene time it was born at: a finished
  // animation leaves document.getAnimations(), and seeking back must find it.
  const born = new Map();
  let firstSeek = true;
  let queue = Promise.resolve();

  function post(message) {
    if (window.parent && window.parent !== window) window.parent.postMessage(message, "*");
  }

  function record(error) {
    errors.push(error);
    post({ type: "pneuma-video:error", error });
  }

  window.addEventListener("error", (event) => {
    record({
      message: String(event.message || (event.error && event.error.message) || event.error),
      line: event.lineno || null,
      column: event.colno || null,
      source: event.filename || "",
    });
  });
  window.addEventListener("unhandledrejection", (event) => {
    const reason = event.reason;
    record({ message: String((reason && reason.message) || reason), line: null, column: null, source: "" });
  });

  function info(t) {
    return {
      frame: Math.round(t * config.fps),
      fps: config.fps,
      duration: config.duration,
      width: config.width,
      height: config.height,
    };
  }

  function runCallbacks(t) {
    const frameInfo = info(t);
    for (const fn of callbacks) {
      try {
        fn(t, frameInfo);
      } catch (e) {
        record({ message: String((e && e.message) || e), line: lineOf(e), column: null, source: "onFrame" });
      }
    }
  }

  // The line a thrown error points at, from its stack, when there is one.
  function lineOf(e) {
    const match = /:(\d+):\d+\)?\s*$/m.exec(String((e && e.stack) || ""));
    return match ? Number(match[1]) : null;
  }

  function adopt(t) {
    for (const animation of document.getAnimations()) {
      if (!born.has(animation)) born.set(animation, firstSeek ? 0 : t);
    }
  }

  function setAnimations(t) {
    for (const [animation, birth] of born) {
      // a CSS animation the style cancelled (its name changed, its element
      // went): setting its time would bring it back
      if (animation.playState === "idle") {
        born.delete(animation);
        continue;
      }
      animation.pause();
      animation.currentTime = Math.max(0, t - birth) * 1000;
    }
  }

  async function imagesDecoded() {
    const pending = [...document.images].filter((img) => !img.complete || !img.naturalWidth);
    await Promise.all(pending.map((img) => img.decode().catch(() => undefined)));
  }

  function nextFrame() {
    return new Promise((resolve) => requestAnimationFrame(() => resolve()));
  }

  async function seekNow(t) {
    const time = Math.max(0, Number(t) || 0);
    if (document.fonts) await document.fonts.ready;
    adopt(time); // the animations the document started with are born at 0
    firstSeek = false;
    runCallbacks(time);
    adopt(time); // those the callbacks started now are born at this time
    setAnimations(time);
    await imagesDecoded();
    if (document.fonts) await document.fonts.ready;
    await nextFrame();
    await nextFrame();
    return { t: time, frame: Math.round(time * config.fps) };
  }

  // Seeks run one after another: a player scrubbing fast never has two
  // frames half drawn at once.
  function seek(t) {
    const done = queue.then(() => seekNow(t));
    queue = done.catch(() => undefined);
    return done;
  }

  function configure(options) {
    for (const key of ["fps", "duration", "width", "height"]) {
      if (options && options[key] !== undefined) config[key] = number(options[key], config[key]);
    }
  }

  window.pneuma = {
    onFrame(fn) {
      if (typeof fn === "function") callbacks.push(fn);
    },
    seek,
    configure,
    errors,
    get duration() {
      return config.duration;
    },
    get fps() {
      return config.fps;
    },
  };

  window.addEventListener("message", (event) => {
    if (event.source !== window.parent) return; // only the page that holds the frame steers it
    const message = event.data || {};
    if (message.type === "pneuma-video:configure") configure(message);
    if (message.type !== "pneuma-video:seek") return;
    seek(message.t).then(
      (done) => post({ type: "pneuma-video:seeked", id: message.id, t: done.t, frame: done.frame, errors }),
      (e) => post({ type: "pneuma-video:seeked", id: message.id, t: message.t, error: String(e), errors }),
    );
  });

  // Until the first seek nothing may run by the wall clock either.
  const pauseAll = () => document.getAnimations().forEach((a) => a.pause());
  document.addEventListener("DOMContentLoaded", pauseAll);
  window.addEventListener("load", () => {
    pauseAll();
    post({ type: "pneuma-video:ready", duration: config.duration, errors });
  });
})();
