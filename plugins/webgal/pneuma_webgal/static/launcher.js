// Pneuma's launcher for the WebGAL engine page (/webgal/ on the engine's own
// site, engine_site.py: another origin than the Pneuma server's).
//
// The server adds this classic script to the engine's index.html, so it runs
// before the engine's module. It does these things, without changing the
// engine:
//
// 1. It watches the editor-sync socket the engine opens by itself
//    (ws://<origin>/api/webgalsync): every SYNCFC report (scene, sentence,
//    stage) is kept in `window.pneumaWebgal.state`, so the viewer around this
//    frame can tell where the game is and what it shows.
// 2. `window.pneumaWebgal.jump(scene, line)` jumps this page's game, the same
//    way a JUMP from the server does (handed to the engine's own socket
//    handler).
// 3. A fragment `#scene=<file under game/scene/>&line=<1-based line>` jumps
//    there as soon as the engine has loaded its start scene, and again on
//    every change of the fragment.
// 4. On the first visit it picks the engine's interface language (the
//    project's language the server names in data-ui-language, else the
//    browser's) so the engine's one-time language picker does not cover the
//    preview; a game's own Default_Language in config.txt still wins.
// 5. A `?token=` in the address (a URL preview_scene handed out) has become
//    the site's HttpOnly cookie on this load: it is dropped from the
//    address bar, out of screenshots and history.
// 6. Framed by the Pneuma server's preview page (static/bridge.js), it talks
//    to it with postMessage only: every state change goes up as
//    {source: 'pneuma-webgal', type: 'state', state}, and
//    {source: 'pneuma-webgal', type: 'jump', scene, line} from that page
//    jumps the game. Only a parent whose origin the server names in
//    data-parent-origins is posted to or listened to.
(function () {
  'use strict';
  if (window.pneumaWebgal) return;
  var script = document.currentScript;
  try {
    var query = new URLSearchParams(window.location.search);
    if (query.has('token')) {
      query.delete('token');
      var rest = query.toString();
      window.history.replaceState(window.history.state, '',
        window.location.pathname + (rest ? '?' + rest : '') + window.location.hash);
    }
  } catch (error) { /* an old browser keeps the address as it is */ }
  try {
    // Engine 4.5.x language ids: zhCn 0, en 1, jp 2, fr 3, de 4, zhTw 5.
    if (!window.localStorage.getItem('lang')) {
      var wanted = String((script && script.dataset.uiLanguage) || navigator.language || 'en').toLowerCase();
      var id = /^zh-(tw|hk|hant)/.test(wanted) ? 5 : /^zh/.test(wanted) ? 0 : /^ja/.test(wanted) ? 2
        : /^fr/.test(wanted) ? 3 : /^de/.test(wanted) ? 4 : 1;
      window.localStorage.setItem('lang', String(id));
    }
  } catch (error) { /* storage disabled: the engine asks */ }
  var NativeWebSocket = window.WebSocket;
  var SYNC_PATH = '/api/webgalsync';
  var JUMP = 0;
  var SYNCFC = 1;

  var state = { connected: false, scene: '', line: 0, speaker: '', text: '', background: '', updatedAt: 0 };
  var listeners = [];
  var engineSocket = null;
  var queued = null; // a jump waiting for the engine's start scene
  var readyResolve;
  var ready = new Promise(function (resolve) { readyResolve = resolve; });

  var parentOrigins = String((script && script.dataset.parentOrigins) || '').split(/\s+/).filter(Boolean);
  var framed = window.parent !== window;

  // The framing page's origin, if it is one the server named: from the
  // browser's ancestor list (or the referrer), else from its 'connect'.
  var parentOrigin = null;
  function allowedParent(origin) {
    return parentOrigins.indexOf(origin) >= 0 ? origin : null;
  }
  if (framed) {
    try {
      var ancestors = window.location.ancestorOrigins;
      if (ancestors && ancestors.length) parentOrigin = allowedParent(ancestors[0]);
    } catch (error) { /* not offered by this browser */ }
    try {
      if (!parentOrigin && document.referrer) parentOrigin = allowedParent(new URL(document.referrer).origin);
    } catch (error) { /* no referrer */ }
  }

  function postUp(message) {
    if (!framed || !parentOrigin) return;
    try { window.parent.postMessage(message, parentOrigin); } catch (error) { /* the page is gone */ }
  }

  function snapshot() {
    return { connected: state.connected, scene: state.scene, line: state.line, speaker: state.speaker,
      text: state.text, background: state.background, updatedAt: state.updatedAt };
  }

  function notify() {
    for (var i = 0; i < listeners.length; i++) {
      try { listeners[i](state); } catch (error) { console.error(error); }
    }
    postUp({ source: 'pneuma-webgal', type: 'state', state: snapshot() });
  }

  function record(raw) {
    var message;
    try { message = JSON.parse(raw); } catch (error) { return; }
    var data = message && message.data;
    if (!data || data.command !== SYNCFC) return;
    var sceneMsg = data.sceneMsg || {};
    var stage = data.stageSyncMsg || {};
    state.scene = String(sceneMsg.scene || '');
    state.line = Number(sceneMsg.sentence) || 0;
    state.speaker = String(stage.showName || '');
    state.text = String(stage.showText || '');
    state.background = String(stage.bgName || '');
    state.updatedAt = Date.now();
    if (state.scene) {
      readyResolve(state);
      if (queued) {
        var next = queued;
        queued = null;
        deliver(next.scene, next.line);
      }
    }
    notify();
  }

  function normalizeScene(scene) {
    var name = String(scene || '').trim().replace(/\\/g, '/').replace(/^\.?\//, '');
    name = name.replace(/^game\/scene\//, '').replace(/^scene\//, '');
    if (name && !/\.txt$/.test(name)) name += '.txt';
    return name;
  }

  function deliver(scene, line) {
    var message = { event: 'message', data: { command: JUMP, sceneMsg: { scene: scene, sentence: line }, stageSyncMsg: {}, message: 'Sync' } };
    var handler = engineSocket && engineSocket.onmessage;
    if (typeof handler !== 'function') return false;
    handler.call(engineSocket, new MessageEvent('message', { data: JSON.stringify(message) }));
    return true;
  }

  /** Jump this page's game to `scene` (under game/scene/) at 1-based `line`. */
  function jump(scene, line) {
    var name = normalizeScene(scene);
    if (!name) return false;
    var target = Math.max(1, Math.floor(Number(line) || 1));
    if (!state.scene) {
      queued = { scene: name, line: target };
      return true;
    }
    return deliver(name, target);
  }

  function fromHash() {
    var hash = window.location.hash.replace(/^#/, '');
    if (!hash) return;
    var params = new URLSearchParams(hash);
    var scene = params.get('scene');
    if (scene) jump(scene, params.get('line') || 1);
  }

  function PneumaSyncSocket(url, protocols) {
    var socket = protocols === undefined ? new NativeWebSocket(url) : new NativeWebSocket(url, protocols);
    var path = '';
    try { path = new URL(String(url), window.location.href).pathname; } catch (error) { path = ''; }
    if (path === SYNC_PATH && !engineSocket) {
      engineSocket = socket;
      var send = socket.send;
      socket.send = function (data) {
        if (typeof data === 'string') record(data);
        return send.call(socket, data);
      };
      socket.addEventListener('open', function () { state.connected = true; notify(); });
      socket.addEventListener('close', function () { state.connected = false; notify(); });
    }
    return socket;
  }
  PneumaSyncSocket.prototype = NativeWebSocket.prototype;
  ['CONNECTING', 'OPEN', 'CLOSING', 'CLOSED'].forEach(function (key) {
    PneumaSyncSocket[key] = NativeWebSocket[key];
  });
  window.WebSocket = PneumaSyncSocket;

  window.pneumaWebgal = {
    state: state,
    ready: ready,
    jump: jump,
    onSync: function (listener) {
      listeners.push(listener);
      return function () { listeners = listeners.filter(function (l) { return l !== listener; }); };
    },
  };
  window.addEventListener('hashchange', fromHash);
  window.addEventListener('message', function (event) {
    if (!framed || event.source !== window.parent || !allowedParent(event.origin)) return;
    var data = event.data;
    if (!data || data.source !== 'pneuma-webgal') return;
    if (data.type === 'connect') {
      parentOrigin = event.origin;
      postUp({ source: 'pneuma-webgal', type: 'hello', state: snapshot() });
    } else if (data.type === 'jump') {
      jump(String(data.scene || ''), Number(data.line) || 1);
    }
  });
  postUp({ source: 'pneuma-webgal', type: 'hello', state: snapshot() });
  fromHash();
})();
