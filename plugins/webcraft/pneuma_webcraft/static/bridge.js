// Runs INSIDE the previewed page, on the webcraft content site's origin (an
// origin of its own, never the shell's: it cannot reach Pneuma's API). The
// content site adds it to every HTML document it serves, as the first
// script of <head> (pneuma.api.ContentSite, inject_head). The viewer names
// the frame "webcraft:" + JSON {frame, scrollY, pick, parentOrigin}; the
// bridge reads that from window.name and reports to the viewer with
// postMessage, to the shell's origin only.
//
// Reports: ready (title, size), the files the page used (the document and
// every resource it loaded, fetches included), console entries with their
// file and line, scroll position, the element the person picked, clicks on
// links to other pages. Answers: describe, scroll-to, pick on/off, axe.
(() => {
  let config = {};
  try {
    if (window.name.startsWith("webcraft:")) config = JSON.parse(window.name.slice(9)) || {};
  } catch { /* not framed by the viewer: stay quiet */ }
  const frame = config.frame || "";
  const parentOrigin = config.parentOrigin || "";
  if (!parentOrigin || parent === window) return;
  const post = (message) => parent.postMessage({ ...message, source: "webcraft-bridge", frame }, parentOrigin);
  const MAX_TEXT = 300;
  const BRIDGE_PREFIX = "/__pneuma__/";

  // A URL on this site as the workspace path it serves ("js/app.js"); other URLs as they are.
  const pathOf = (url) => {
    try {
      const u = new URL(url, location.href);
      if (u.origin !== location.origin) return String(url);
      let path = decodeURIComponent(u.pathname).replace(/^\//, "");
      if (path === "" || path.endsWith("/")) path += "index.html";
      return path;
    } catch { return String(url); }
  };

  // --- the files the page used ------------------------------------------------------
  // Whatever it loaded from this site, at any time: a change to one of them reloads it.
  const used = new Set([pathOf(location.href)]);
  let usesTimer = 0;
  const noteUses = (entries) => {
    let added = false;
    for (const entry of entries) {
      let u;
      try { u = new URL(entry.name); } catch { continue; }
      if (u.origin !== location.origin || u.pathname.startsWith(BRIDGE_PREFIX)) continue;
      const path = pathOf(entry.name);
      if (!used.has(path)) { used.add(path); added = true; }
      // A fetch of a file that is not there (elements report their own failures).
      if (entry.responseStatus === 404 && ["fetch", "xmlhttprequest"].includes(entry.initiatorType)) {
        report({ kind: "missing-file", message: `${path} is not in the workspace`, source: pathOf(location.href) });
      }
    }
    if (added && readyDone) {
      clearTimeout(usesTimer);
      usesTimer = setTimeout(() => post({ type: "uses", paths: [...used] }), 50);
    }
  };
  let readyDone = false;
  try {
    new PerformanceObserver((list) => noteUses(list.getEntries())).observe({ type: "resource", buffered: true });
  } catch { /* no observer: the list at "ready" is all there is */ }
  if (performance.setResourceTimingBufferSize) performance.setResourceTimingBufferSize(2000);

  // --- console ---------------------------------------------------------------------
  const describeArg = (value) => {
    if (value instanceof Error) return `${value.name}: ${value.message}`;
    if (typeof value === "string") return value;
    try { return JSON.stringify(value); } catch { return String(value); }
  };
  const report = (entry) => post({ type: "console", entry: { at: Date.now(), ...entry } });
  // The page's code in a V8 stack: the first frame that is not this bridge,
  // its URL as the workspace file (the browser counts lines as the file does).
  const BRIDGE = /\/__pneuma__\/bridge\.js/;
  const whereIn = (stack) => {
    for (const line of String(stack || "").split("\n").slice(1)) {
      if (BRIDGE.test(line)) continue;
      const found = /\(?([^()\s]+):(\d+):(\d+)\)?\s*$/.exec(line.trim());
      if (found) return { source: pathOf(found[1]), line: Number(found[2]), column: Number(found[3]) };
    }
    return {};
  };
  const originalError = console.error.bind(console);
  console.error = (...args) => {
    report({ kind: "console.error", message: args.map(describeArg).join(" ").slice(0, 2000), ...whereIn(new Error().stack) });
    originalError(...args);
  };
  window.addEventListener("error", (event) => {
    const target = event.target;
    if (target && target !== window && target.tagName) {
      // A resource (img, script, link) that failed to load.
      const url = target.src || target.href || "";
      report({ kind: "resource", message: `${target.tagName.toLowerCase()} failed to load ${url ? pathOf(url) : ""}`.trim() });
      return;
    }
    report({
      kind: "exception",
      message: event.message || describeArg(event.error),
      source: event.filename ? pathOf(event.filename) : "",
      line: event.lineno || 0,
      column: event.colno || 0,
    });
  }, true);
  window.addEventListener("unhandledrejection", (event) => {
    const reason = event.reason;
    report({
      kind: "unhandledrejection", message: `Unhandled rejection: ${describeArg(reason)}`,
      ...(reason instanceof Error ? whereIn(reason.stack) : {}),
    });
  });

  // --- selectors ---------------------------------------------------------------------
  const cssEscape = (s) => (window.CSS && CSS.escape ? CSS.escape(s) : s.replace(/[^\w-]/g, "\\$&"));
  function selectorOf(el) {
    const parts = [];
    for (let node = el; node && node.nodeType === 1 && node !== document.documentElement; node = node.parentElement) {
      if (node.id && document.querySelectorAll(`#${cssEscape(node.id)}`).length === 1) {
        parts.unshift(`#${cssEscape(node.id)}`);
        break;
      }
      let part = node.tagName.toLowerCase();
      const classes = [...node.classList].filter((c) => !c.startsWith("webcraft-")).slice(0, 2);
      if (classes.length) part += classes.map((c) => `.${cssEscape(c)}`).join("");
      const parent = node.parentElement;
      if (parent) {
        const same = [...parent.children].filter((c) => c.matches(part));
        if (same.length > 1) part += `:nth-of-type(${[...parent.children].filter((c) => c.tagName === node.tagName).indexOf(node) + 1})`;
      }
      parts.unshift(part);
      if (node.tagName === "BODY") break;
    }
    return parts.join(" > ");
  }
  function boxOf(el) {
    const r = el.getBoundingClientRect();
    const s = getComputedStyle(el);
    const px = (v) => Math.round(parseFloat(v) || 0);
    return {
      x: Math.round(r.left + scrollX), y: Math.round(r.top + scrollY),
      width: Math.round(r.width), height: Math.round(r.height),
      margin: [s.marginTop, s.marginRight, s.marginBottom, s.marginLeft].map(px),
      padding: [s.paddingTop, s.paddingRight, s.paddingBottom, s.paddingLeft].map(px),
      display: s.display, fontSize: s.fontSize, color: s.color, background: s.backgroundColor,
    };
  }

  // --- picking an element --------------------------------------------------------------
  let pick = !!config.pick;
  let outline = null;
  const style = document.createElement("style");
  style.textContent = ".webcraft-hover{outline:2px dashed #5b8def!important;outline-offset:1px}" +
    ".webcraft-picked{outline:2px solid #e8590c!important;outline-offset:1px}";
  const addStyle = () => (document.head || document.documentElement).appendChild(style);
  let hovered = null;
  document.addEventListener("mouseover", (event) => {
    if (!pick) return;
    hovered?.classList.remove("webcraft-hover");
    hovered = event.target;
    hovered.classList?.add("webcraft-hover");
  }, true);
  document.addEventListener("click", (event) => {
    const el = event.target;
    if (pick) {
      event.preventDefault();
      event.stopPropagation();
      outline?.classList.remove("webcraft-picked");
      outline = el;
      el.classList.add("webcraft-picked");
      el.classList.remove("webcraft-hover");
      post({
        type: "select",
        selection: {
          selector: selectorOf(el), tag: el.tagName.toLowerCase(),
          text: (el.innerText || el.textContent || "").replace(/\s+/g, " ").trim().slice(0, MAX_TEXT),
          box: boxOf(el),
        },
      });
      return;
    }
    const link = el.closest && el.closest("a[href]");
    if (!link) return;
    const href = link.getAttribute("href");
    if (/^(#|[a-z][a-z0-9+.-]*:|\/\/)/i.test(href)) {
      if (/^[a-z][a-z0-9+.-]*:|^\/\//i.test(href)) event.preventDefault(); // never leave the preview
      return;
    }
    event.preventDefault();
    post({ type: "navigate", href });
  }, true);
  function clearPick() {
    outline?.classList.remove("webcraft-picked");
    hovered?.classList.remove("webcraft-hover");
    outline = hovered = null;
  }

  // --- scroll and size ---------------------------------------------------------------
  let scrollTimer = 0;
  addEventListener("scroll", () => {
    clearTimeout(scrollTimer);
    scrollTimer = setTimeout(() => post({ type: "scroll", scrollY: Math.round(scrollY) }), 80);
  }, { passive: true });

  function describe() {
    const headings = [...document.querySelectorAll("h1,h2,h3")].slice(0, 30)
      .map((h) => ({ level: Number(h.tagName[1]), text: h.textContent.replace(/\s+/g, " ").trim().slice(0, 120) }));
    const visible = [...document.querySelectorAll("h1,h2,h3,section[id]")]
      .find((h) => h.getBoundingClientRect().bottom > 0);
    return {
      title: document.title,
      scrollY: Math.round(scrollY),
      viewportWidth: innerWidth,
      viewportHeight: innerHeight,
      pageHeight: document.documentElement.scrollHeight,
      horizontalOverflow: document.documentElement.scrollWidth > innerWidth,
      headings,
      visibleHeading: visible ? visible.textContent.replace(/\s+/g, " ").trim().slice(0, 120) : "",
    };
  }

  async function runAxe() {
    if (!window.axe) {
      // Served by the content site beside this bridge (the page's own origin).
      await new Promise((resolve, reject) => {
        const script = document.createElement("script");
        script.src = BRIDGE_PREFIX + "axe.min.js";
        script.onload = resolve;
        script.onerror = () => reject(new Error("axe-core is not installed (run scripts/build-web)"));
        document.documentElement.appendChild(script);
        script.remove();
      });
    }
    if (!window.axe) throw new Error("axe-core did not load in the page");
    const results = await window.axe.run(document, { resultTypes: ["violations"] });
    return results.violations.map((v) => ({
      id: v.id, impact: v.impact, help: v.help, helpUrl: v.helpUrl,
      nodes: v.nodes.slice(0, 20).map((n) => ({ target: n.target.join(" "), summary: (n.failureSummary || "").slice(0, 400) })),
      count: v.nodes.length,
    }));
  }

  addEventListener("message", async (event) => {
    if (event.source !== parent || event.origin !== parentOrigin) return;
    const message = event.data || {};
    const answer = (result) => post({ type: "reply", id: message.id, result });
    try {
      if (message.type === "pick") {
        pick = !!message.on;
        if (!pick) clearPick();
      } else if (message.type === "clear-selection") clearPick();
      else if (message.type === "describe") answer({ ok: true, data: describe() });
      else if (message.type === "scroll-to") {
        let found = true;
        if (message.selector) {
          const el = document.querySelector(message.selector);
          found = !!el;
          el?.scrollIntoView({ block: "start" });
        } else scrollTo(0, message.scrollY || 0);
        answer({ ok: found, data: describe() });
      } else if (message.type === "axe") answer({ ok: true, data: await runAxe() });
    } catch (error) {
      answer({ ok: false, error: String(error && error.message || error) });
    }
  });

  // "ready" tells the viewer it may show this document in place of the old
  // one: so only once it has painted (a frame after load), or a short while
  // after load if animation frames do not come.
  function afterPaint(then) {
    let done = false;
    const once = () => { if (!done) { done = true; then(); } };
    requestAnimationFrame(() => setTimeout(once, 0));
    setTimeout(once, 300);
  }
  function ready() {
    addStyle();
    if (config.scrollY) scrollTo(0, config.scrollY);
    afterPaint(() => {
      noteUses(performance.getEntriesByType("resource"));
      readyDone = true;
      post({ type: "uses", paths: [...used] });
      post({ type: "ready", info: describe() });
    });
  }
  if (document.readyState === "complete") ready();
  else addEventListener("load", ready);
})();
