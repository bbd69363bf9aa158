// The shared file's first script (docs/sharing.md, "The page"): a classic
// script, put in the page as text by pneuma/share/inline.py. The page runs
// from file:// with every fetch refused by its policy, so the modules it
// holds as text are turned into blob: URLs, mapped by an import map under
// the addresses they are rewritten to (pneuma-share:/static/lib/…), and the
// few things a module asks the server for are answered from the page
// itself: the catalogues, the preferences, and whatever the player
// registers (a checkpoint's files). Nothing here reaches the network.
(async function boot() {
  'use strict';
  var SCHEME = 'pneuma-share:';
  var TYPES = { module: 'text/javascript', script: 'text/javascript', style: 'text/css',
    json: 'application/json', text: 'text/plain' };
  // The page's nonce (its policy allows no other inline script): the import
  // map below needs it, and site-pages.js gives it to a page's scripts.
  var nonce = document.currentScript ? document.currentScript.nonce : '';
  var holder = document.getElementById('pneuma-share-modules');
  var modules = JSON.parse((holder && holder.textContent) || '{}');
  var blobs = new Map(); // blob: URL -> Blob, so a fetch of one is answered
  var assets = new Map(); // pneuma-share: address -> blob: URL
  var createObjectURL = URL.createObjectURL.bind(URL);
  URL.createObjectURL = function remember(object) {
    var url = createObjectURL(object);
    if (object instanceof Blob) blobs.set(url, object);
    return url;
  };
  // Each file is zlib-compressed in base64 (pneuma/share/inline.py).
  function inflate(packed, type) {
    var binary = atob(packed);
    var bytes = new Uint8Array(binary.length);
    for (var i = 0; i < binary.length; i += 1) bytes[i] = binary.charCodeAt(i);
    var stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream('deflate'));
    return new Response(stream).arrayBuffer().then(function typed(buffer) {
      return new Blob([buffer], { type: type });
    });
  }
  var addresses = Object.keys(modules);
  var inflated = await Promise.all(addresses.map(function one(address) {
    var entry = modules[address];
    return inflate(entry.z, TYPES[entry.type] || 'text/plain');
  }));
  addresses.forEach(function add(address, index) {
    assets.set(address, URL.createObjectURL(inflated[index]));
  });

  /** The blob: URL of a file of the page named by its address (or its server path). */
  function assetUrl(value) {
    var text = String(value);
    if (text.indexOf(SCHEME) !== 0 && text.charAt(0) === '/') text = SCHEME + text;
    return assets.get(text.split('?')[0]) || null;
  }

  // A module sets a stylesheet's or a script's address from its own
  // (new URL("./viewer.css", import.meta.url)): point it at the blob.
  // A frame asked to load a page of the content site (a site-like mode's
  // preview) shows the document the player puts together instead, as
  // srcdoc, never with allow-same-origin (site-pages.js).
  var frameSources = []; // (url) => HTML | null, registered by the player
  var setAttribute = Element.prototype.setAttribute;
  function frameDocument(frame, value) {
    for (var i = 0; i < frameSources.length; i += 1) {
      var html = frameSources[i](String(value));
      if (html != null) {
        var sandbox = frame.getAttribute('sandbox');
        var tokens = (sandbox == null ? 'allow-scripts' : sandbox).split(/\s+/)
          .filter(function keep(token) { return token && token !== 'allow-same-origin'; });
        setAttribute.call(frame, 'sandbox', tokens.join(' '));
        frame.srcdoc = html;
        return true;
      }
    }
    return false;
  }
  Element.prototype.setAttribute = function setMapped(name, value) {
    var lower = String(name).toLowerCase();
    if (lower === 'src' && this instanceof HTMLIFrameElement && frameDocument(this, value)) return undefined;
    if ((lower === 'href' || lower === 'src') && String(value).indexOf(SCHEME) === 0) {
      value = assetUrl(value) || value;
    }
    return setAttribute.call(this, name, value);
  };
  [[HTMLLinkElement, 'href'], [HTMLScriptElement, 'src'], [HTMLIFrameElement, 'src']].forEach(function patch(pair) {
    var proto = pair[0].prototype;
    var descriptor = Object.getOwnPropertyDescriptor(proto, pair[1]);
    if (!descriptor || !descriptor.set) return;
    Object.defineProperty(proto, pair[1], {
      configurable: true,
      enumerable: descriptor.enumerable,
      get: descriptor.get,
      set: function setMapped(value) {
        if (this instanceof HTMLIFrameElement && frameDocument(this, value)) return;
        var mapped = String(value).indexOf(SCHEME) === 0 ? assetUrl(value) : null;
        descriptor.set.call(this, mapped || value);
      },
    });
  });

  var routes = []; // (url) => Response | null, registered by the player
  function jsonResponse(status, body) {
    return new Response(JSON.stringify(body), { status: status, headers: { 'Content-Type': 'application/json' } });
  }
  window.fetch = function shareFetch(input) {
    var url = typeof input === 'string' ? input : (input && (input.url || input.href)) || String(input);
    try {
      if (blobs.has(url)) return Promise.resolve(new Response(blobs.get(url)));
      var asset = assetUrl(url);
      if (asset && blobs.has(asset)) return Promise.resolve(new Response(blobs.get(asset)));
      var path = url.indexOf(SCHEME) === 0 ? url.slice(SCHEME.length) : url;
      if (path.split('?')[0] === '/api/preferences') return Promise.resolve(jsonResponse(200, {}));
      for (var i = 0; i < routes.length; i += 1) {
        var answer = routes[i](path);
        if (answer) return Promise.resolve(answer);
      }
    } catch (error) {
      return Promise.reject(error);
    }
    return Promise.resolve(jsonResponse(404, { code: 'E_NOT_FOUND', message: 'not in this shared file', recoverable: false }));
  };

  window.pneumaShare = {
    assetUrl: assetUrl,
    addRoute: function addRoute(route) { routes.push(route); },
    addFrameSource: function addFrameSource(source) { frameSources.push(source); },
    jsonResponse: jsonResponse,
    nonce: nonce,
  };

  var imports = {};
  assets.forEach(function map(url, address) {
    var entry = modules[address];
    if (entry.type === 'module') imports[address] = url;
  });
  var importMap = document.createElement('script');
  importMap.type = 'importmap';
  importMap.nonce = nonce;
  importMap.textContent = JSON.stringify({ imports: imports });
  document.head.append(importMap);
  // The page's stylesheet (the shell's, Compare's, the player's) before the player draws.
  var style = document.createElement('link');
  style.rel = 'stylesheet';
  style.href = assets.get(SCHEME + '/share/page.css');
  await new Promise(function loaded(resolve) {
    style.onload = resolve;
    style.onerror = resolve;
    document.head.append(style);
  });
  var player = document.createElement('script');
  player.type = 'module';
  player.src = assets.get(SCHEME + '/share/player.js');
  document.head.append(player);
}());
