// Pneuma's bridge to the WebGAL engine: the script of the Pneuma server's
// /webgal/ page, which the webgal viewer frames.
//
// The engine runs on a site of its own (engine_site.py: another origin, with
// a read-only token of its own), because the game it plays is workspace
// content. This page frames it and gives the viewer, which is same-origin
// with this page, the same `window.pneumaWebgal` as before (`state`, `ready`,
// `jump(scene, line)`, `onSync(listener)`), spoken over postMessage with the
// engine page's static/launcher.js:
//
//   engine -> here  {source: 'pneuma-webgal', type: 'hello' | 'state', state}
//   here -> engine  {source: 'pneuma-webgal', type: 'connect' | 'jump', scene?, line?}
//
// Only messages from the engine frame's window and origin are read, and
// only the known fields of a state, as strings and numbers: the game may be
// hostile, so nothing it says is run or put into the page as markup.
(function () {
  'use strict';
  if (window.pneumaWebgal) return;
  var script = document.currentScript;
  var engineSrc = String((script && script.dataset.engineSrc) || '');
  var engineOrigin = String((script && script.dataset.engineOrigin) || '');
  var frame = document.getElementById('pneuma-webgal-engine');
  var SOURCE = 'pneuma-webgal';

  var state = { connected: false, scene: '', line: 0, speaker: '', text: '', background: '', updatedAt: 0 };
  var listeners = [];
  var engineUp = false; // the engine page has spoken: it listens now
  var queued = null; // a jump asked for before that
  var readyResolve;
  var ready = new Promise(function (resolve) { readyResolve = resolve; });

  function send(message) {
    try {
      frame.contentWindow.postMessage(message, engineOrigin);
      return true;
    } catch (error) {
      return false;
    }
  }

  function short(value) {
    return String(value == null ? '' : value).slice(0, 4000);
  }

  function apply(raw) {
    if (!raw || typeof raw !== 'object') return;
    state.connected = raw.connected === true;
    state.scene = short(raw.scene);
    state.line = Math.max(0, Math.floor(Number(raw.line) || 0));
    state.speaker = short(raw.speaker);
    state.text = short(raw.text);
    state.background = short(raw.background);
    state.updatedAt = Date.now();
    if (state.scene) readyResolve(state);
    for (var i = 0; i < listeners.length; i++) {
      try { listeners[i](state); } catch (error) { console.error(error); }
    }
  }

  /** Jump the framed game to `scene` (under game/scene/) at 1-based `line`. */
  function jump(scene, line) {
    var name = String(scene || '').trim();
    if (!name) return false;
    var message = { source: SOURCE, type: 'jump', scene: name, line: Math.max(1, Math.floor(Number(line) || 1)) };
    if (!engineUp) {
      queued = message;
      return true;
    }
    return send(message);
  }

  window.addEventListener('message', function (event) {
    if (event.origin !== engineOrigin || !frame || event.source !== frame.contentWindow) return;
    var data = event.data;
    if (!data || data.source !== SOURCE || (data.type !== 'hello' && data.type !== 'state')) return;
    engineUp = true;
    if (queued) {
      var next = queued;
      queued = null;
      send(next);
    }
    apply(data.state);
  });

  function fromHash() {
    var params = new URLSearchParams(window.location.hash.replace(/^#/, ''));
    var scene = params.get('scene');
    if (scene) jump(scene, params.get('line') || 1);
  }

  if (frame && engineSrc) {
    // A browser that does not say who frames the engine: introduce this page.
    frame.addEventListener('load', function () { send({ source: SOURCE, type: 'connect' }); });
    // The engine reads scene and line from its own fragment on its first load.
    frame.src = engineSrc + window.location.hash;
    window.addEventListener('hashchange', fromHash);
  }

  window.pneumaWebgal = {
    state: state,
    ready: ready,
    jump: jump,
    onSync: function (listener) {
      listeners.push(listener);
      return function () { listeners = listeners.filter(function (l) { return l !== listener; }); };
    },
  };
})();
