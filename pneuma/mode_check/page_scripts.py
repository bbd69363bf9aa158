"""The functions the browser checks run in the page (function sources, not
bare expressions: the shell's content policy has no eval, and Playwright
compiles a function through DevTools, which the policy does not govern)."""

from __future__ import annotations

# Wraps the viewer instance's runAction and showPins so that the raw answer
# (before the shell normalizes it) and a throw are seen: the shell turns both
# a wrong shape and an exception into an answer the agent would accept.
RECORD_VIEWER = """() => {
  const host = window.pneuma.ui.host;
  const instance = host && host.instance;
  const seen = window.__pneumaModeCheck = { actions: {}, pins: [] };
  if (!instance) return false;
  const shape = (value) => value === undefined || value === null ? 'none'
    : Array.isArray(value) ? 'array' : typeof value === 'object'
      ? (typeof value.success === 'boolean' ? 'result' : 'object without a boolean success') : typeof value;
  if (typeof instance.runAction === 'function') {
    const run = instance.runAction.bind(instance);
    instance.runAction = async (id, params) => {
      try {
        const value = await run(id, params);
        seen.actions[id] = { shape: shape(value) };
        return value;
      } catch (error) {
        seen.actions[id] = { threw: String((error && error.message) || error) };
        throw error;
      }
    };
  }
  if (typeof instance.showPins === 'function') {
    const show = instance.showPins.bind(instance);
    instance.showPins = (list) => {
      try { seen.pins.push({ count: (list || []).length }); return show(list); }
      catch (error) { seen.pins.push({ threw: String((error && error.message) || error) }); throw error; }
    };
  }
  return typeof instance.runAction === 'function';
}"""

SEEN = "() => window.__pneumaModeCheck"

STATE = """() => {
  const host = window.pneuma.ui.host;
  return {
    loadError: host ? (host.loadError || null) : 'no viewer host',
    capabilities: host ? host.capabilities : [],
    files: host ? host.files.filter((f) => typeof f.content === 'string').map((f) => f.path) : [],
  };
}"""

SET_SELECTION = """(selection) => {
  const host = window.pneuma.ui.host;
  host.ctx().setSelection(selection);
  return true;
}"""

SEND_MESSAGE = "(text) => window.pneuma.shell.send(text)"

FILE_TEXT = """(path) => {
  const file = window.pneuma.ui.host.files.find((f) => f.path === path);
  return file ? file.content : null;
}"""

EDIT_FILE = """async ({ path, content, base }) => {
  const answer = await window.pneuma.ui.host.ctx().editFile(path, content, { base });
  return answer;
}"""

# axe-core's own source is evaluated as a function body (no eval in the page).
def load_axe(source: str) -> str:
    return "() => {\n" + source + "\n;return typeof window.axe;\n}"


RUN_AXE = """async () => {
  const where = document.querySelector('.viewer-panel') || document;
  const result = await window.axe.run(where, { resultTypes: ['violations'], iframes: false });
  return result.violations.map((v) => ({ id: v.id, impact: v.impact, help: v.help, nodes: v.nodes.length,
    target: v.nodes.slice(0, 3).map((n) => n.target.join(' ')) }));
}"""
