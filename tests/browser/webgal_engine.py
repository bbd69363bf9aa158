"""The WebGAL engine in a test's browser, at a frame rate the machine can
spare.

Chromium runs with --disable-gpu, so the engine's 2560×1440 PIXI stage is
drawn by SwiftShader on the CPU: at its own 60 frames a second one open
game keeps a whole core busy for as long as it is open, slowing its own
test and whatever the other test worker runs beside it. What the tests
check (the text box, the engine's reported scene and line, the jumps, the
title screen's picture) does not depend on how often the stage is
redrawn: the engine's animations advance by elapsed time (PIXI's ticker),
and its text box is DOM. So every engine a test's browser context loads
draws at most ``ENGINE_FPS`` frames a second, through PIXI's own
``ticker.maxFPS`` on the application the engine publishes as
``window.__PIXI_APP__`` (webgal-engine 4.5.18): the engine itself is
unchanged and plays exactly as it does for a person, on a slower screen.
"""

from __future__ import annotations

from typing import Any

ENGINE_FPS = 10

# Runs in every frame of the context before its own scripts; only a frame
# that publishes a PIXI application (the engine's) is affected.
_CAP_FRAME_RATE = """(() => {
  let app;
  Object.defineProperty(window, '__PIXI_APP__', {
    configurable: true,
    get: () => app,
    set: (value) => {
      app = value;
      if (value && value.ticker) value.ticker.maxFPS = %d;
    },
  });
})();""" % ENGINE_FPS


def cap_engine_frame_rate(context: Any) -> Any:
    """Make every WebGAL engine that ``context`` (a Playwright browser
    context) loads from now on draw at most ENGINE_FPS frames a second.
    Returns the context."""
    context.add_init_script(_CAP_FRAME_RATE)
    return context


def engine_frame_rate(frame: Any) -> float | None:
    """The cap the engine in ``frame`` draws under (None without an engine):
    proof in a test that the cap took hold."""
    return frame.evaluate(
        "() => window.__PIXI_APP__ && window.__PIXI_APP__.ticker ? window.__PIXI_APP__.ticker.maxFPS : null")
