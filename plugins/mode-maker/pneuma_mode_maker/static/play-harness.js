// The Play frame's harness (docs/mode-maker.md, "Play"): a classic script,
// inlined by routes.py into a page served sandboxed without
// allow-same-origin and with connect-src 'none', so the viewer under
// construction runs in an opaque origin that can reach neither Pneuma's API
// nor its token (docs/security.md).
//
// The maker's page posts {type: "play", modules, shared, entry, files,
// blobs, manifest, locale}; the harness turns the package's static files into
// blob: modules (rewriting their imports to each other's blob URLs and
// import.meta.url to a virtual base it answers itself), mounts the viewer
// with a minimal ctx, and posts back what happens: mounted, problems,
// selections, the page's text.
(function () {
  "use strict";

  const VIRTUAL = "https://play.pneuma.invalid/static/";
  const IMPORT = /(\bimport\s*(?:[\w$*{}\s,]+?\s*from\s*)?|\bexport\s*[\w$*{}\s,]*?\s*from\s*|\bimport\s*\(\s*)(["'])([^"'\n]+)\2/g;
  const MIME = { js: "text/javascript", mjs: "text/javascript", css: "text/css", json: "application/json",
    svg: "image/svg+xml", png: "image/png", jpg: "image/jpeg", jpeg: "image/jpeg", gif: "image/gif",
    webp: "image/webp", woff2: "font/woff2", html: "text/html", md: "text/markdown", txt: "text/plain" };

  let maker = null; // the maker's window (the frame's parent)
  let instance = null;
  let play = null;
  const localeListeners = new Set();

  function post(message) {
    if (maker) maker.postMessage(message, "*");
  }

  function problem(kind, error) {
    const message = error && error.message ? String(error.message) : String(error);
    const stack = error && error.stack ? String(error.stack).split("\n").slice(0, 6).join("\n") : "";
    post({ type: "problem", kind, message, stack });
  }

  function mimeOf(path) {
    const suffix = path.slice(path.lastIndexOf(".") + 1).toLowerCase();
    return MIME[suffix] || "application/octet-stream";
  }

  function dirOf(path) {
    return path.includes("/") ? path.slice(0, path.lastIndexOf("/") + 1) : "";
  }

  function normalize(path) {
    const out = [];
    for (const part of path.split("/")) {
      if (part === "..") out.pop();
      else if (part && part !== ".") out.push(part);
    }
    return out.join("/");
  }

  // --- the package's files as blob: URLs -----------------------------------

  function moduleUrls(modules, shared, assets) {
    const urls = new Map(); // key -> blob URL
    const busy = new Set();

    function rewrite(key, source, base) {
      return source
        .replace(/\bimport\.meta\.url\b/g, JSON.stringify(base))
        .replace(IMPORT, (whole, head, quote, specifier) => {
          const target = resolve(specifier, key);
          return target ? `${head}${quote}${target}${quote}` : whole;
        });
    }

    // A module naming itself is a comment's example (the shell's helpers
    // document their own import line), never a real import.
    function resolve(specifier, from) {
      if (specifier.startsWith("/")) return specifier in shared && specifier !== from ? urlOf(specifier) : null;
      if (!specifier.startsWith("./") && !specifier.startsWith("../")) return null;
      const path = normalize(dirOf(from.startsWith("/") ? "" : from) + specifier);
      return path in modules && path !== from ? urlOf(path) : null;
    }

    function urlOf(key) {
      if (urls.has(key)) return urls.get(key);
      if (key in assets) {
        urls.set(key, URL.createObjectURL(new Blob([assets[key]], { type: mimeOf(key) })));
        return urls.get(key);
      }
      if (busy.has(key)) throw new Error(`import cycle through ${key}: Play cannot load modules that import each other`);
      busy.add(key);
      const isShared = key.startsWith("/");
      const source = isShared ? shared[key] : modules[key];
      const isScript = /\.m?js$/i.test(key);
      const text = isScript ? rewrite(key, source, isShared ? key : VIRTUAL + key) : source;
      const url = URL.createObjectURL(new Blob([text], { type: mimeOf(key) }));
      busy.delete(key);
      urls.set(key, url);
      return url;
    }

    return { urlOf, has: (key) => key in modules || key in assets };
  }

  // A stylesheet or picture the viewer links by a URL made from
  // import.meta.url points at the virtual base: its blob URL is swapped in
  // as the URL is set (the browser would fetch, and the policy refuse, the
  // virtual one at once), and for markup, as the element is added.
  function watchVirtualUrls(urls) {
    const blobFor = (value) => {
      if (typeof value !== "string" || !value.startsWith(VIRTUAL)) return value;
      const key = normalize(value.slice(VIRTUAL.length).split(/[?#]/)[0]);
      return urls.has(key) ? urls.urlOf(key) : value;
    };
    for (const [proto, prop] of [[HTMLLinkElement.prototype, "href"], [HTMLImageElement.prototype, "src"],
      [HTMLScriptElement.prototype, "src"], [HTMLSourceElement.prototype, "src"], [HTMLMediaElement.prototype, "src"]]) {
      const own = Object.getOwnPropertyDescriptor(proto, prop);
      if (!own || !own.set) continue;
      Object.defineProperty(proto, prop, { ...own, set(value) { own.set.call(this, blobFor(value)); } });
    }
    const setAttribute = Element.prototype.setAttribute;
    Element.prototype.setAttribute = function (name, value) {
      return setAttribute.call(this, name, /^(href|src)$/i.test(name) ? blobFor(value) : value);
    };
    const swap = (el) => {
      for (const attr of ["href", "src"]) {
        const value = el.getAttribute && el.getAttribute(attr);
        if (value && value.startsWith(VIRTUAL)) {
          const key = normalize(value.slice(VIRTUAL.length).split(/[?#]/)[0]);
          if (urls.has(key)) el.setAttribute(attr, urls.urlOf(key));
        }
      }
    };
    new MutationObserver((records) => {
      for (const record of records) {
        if (record.type === "attributes") swap(record.target);
        for (const node of record.addedNodes || []) {
          if (node.nodeType !== 1) continue;
          swap(node);
          for (const el of node.querySelectorAll("[href],[src]")) swap(el);
        }
      }
    }).observe(document, { subtree: true, childList: true, attributes: true, attributeFilter: ["href", "src"] });
    const realFetch = window.fetch.bind(window);
    window.fetch = (input, init) => {
      const url = typeof input === "string" ? input : input && input.url;
      if (url && url.startsWith(VIRTUAL)) {
        const key = normalize(url.slice(VIRTUAL.length).split(/[?#]/)[0]);
        if (urls.has(key)) return realFetch(urls.urlOf(key), init);
      }
      return realFetch(input, init);
    };
  }

  // --- the sample files ------------------------------------------------------

  function sampleUrls(files, blobs) {
    const made = new Map();
    return (path) => {
      const key = normalize(String(path || ""));
      if (made.has(key)) return made.get(key);
      const file = files.find((f) => f.path === key);
      let url = "";
      if (blobs[key]) url = URL.createObjectURL(new Blob([blobs[key]], { type: mimeOf(key) }));
      else if (file && typeof file.content === "string") {
        url = URL.createObjectURL(new Blob([file.content], { type: mimeOf(key) }));
      }
      made.set(key, url);
      return url;
    };
  }

  function makeCtx(message, viewerModule) {
    const files = message.files;
    return {
      mode: message.manifest,
      params: {},
      files,
      items: () => (typeof viewerModule.resolveItems === "function" ? viewerModule.resolveItems(files) : []),
      contentUrl: sampleUrls(files, message.blobs || {}),
      baseUrl: "",
      locale: message.locale,
      t: (key) => key,
      onLocaleChange(callback) {
        localeListeners.add(callback);
        return () => localeListeners.delete(callback);
      },
      setSelection(selection) {
        let context = "";
        try {
          context = selection && viewerModule.extractContext ? viewerModule.extractContext(selection, files) : "";
        } catch (error) {
          problem("extractContext", error);
        }
        post({ type: "selection", selection: selection ?? null, context: String(context || "") });
      },
      setActiveFile(path) {
        post({ type: "active-file", path });
      },
      writeFile: async () => ({ success: false, message: "Play does not write files: the seed files are samples" }),
      deleteFile: async () => ({ success: false, message: "Play does not delete files" }),
      saveCapture: async () => ({ path: null }),
      confirm: async () => false,
      sendMessage(text) {
        post({ type: "message", text: String(text) });
      },
    };
  }

  async function mount(message) {
    play = message;
    const urls = moduleUrls(message.modules, message.shared || {}, message.assets || {});
    watchVirtualUrls(urls);
    if (!urls.has(message.entry)) throw new Error(`the viewer module ${message.entry} is not in the package's static folder`);
    const loaded = await import(urls.urlOf(message.entry));
    const viewerModule = loaded.default || loaded;
    if (!viewerModule || typeof viewerModule.mount !== "function") {
      throw new Error(`${message.entry} has no default export with mount(element, ctx)`);
    }
    const root = document.getElementById("pm-play-root");
    instance = await viewerModule.mount(root, makeCtx(message, viewerModule));
    post({ type: "mounted", text: textOfPage() });
  }

  function textOfPage() {
    return (document.body.innerText || "").replace(/\s+/g, " ").trim().slice(0, 600);
  }

  async function runAction(message) {
    if (!instance || typeof instance.runAction !== "function") {
      post({ type: "action-result", id: message.id, result: { success: false, message: "the viewer is not mounted or has no runAction" } });
      return;
    }
    try {
      const result = await instance.runAction(message.actionId, message.params || {});
      post({ type: "action-result", id: message.id, result: result ?? null, text: textOfPage() });
    } catch (error) {
      problem("runAction", error);
      post({ type: "action-result", id: message.id, result: { success: false, message: String(error && error.message || error) } });
    }
  }

  window.addEventListener("error", (event) => problem("error", event.error || event.message));
  window.addEventListener("unhandledrejection", (event) => problem("promise", event.reason));
  const consoleError = console.error.bind(console);
  console.error = (...args) => {
    consoleError(...args);
    problem("console", args.map((a) => (a && a.message) || String(a)).join(" "));
  };

  window.addEventListener("message", (event) => {
    const message = event.data;
    if (!message || typeof message !== "object") return;
    // Only the maker's page, which framed this one, may drive it.
    if (event.source !== window.parent) return;
    maker = window.parent;
    if (message.type === "play" && play === null) {
      mount(message).catch((error) => problem("mount", error));
    } else if (message.type === "action") {
      runAction(message);
    } else if (message.type === "describe") {
      post({ type: "described", id: message.id, text: textOfPage(), mounted: instance !== null });
    } else if (message.type === "locale") {
      document.documentElement.lang = message.locale;
      for (const callback of localeListeners) {
        try { callback(message.locale); } catch (error) { problem("onLocaleChange", error); }
      }
    }
  });
  window.addEventListener("DOMContentLoaded", () => window.parent.postMessage({ type: "ready" }, "*"));
})();
