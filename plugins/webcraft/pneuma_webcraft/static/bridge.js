// Runs INSIDE the previewed page (an opaque-origin, sandboxed frame): the
// viewer prepends it to every page it shows, after a line that defines
// WEBCRAFT_CONFIG = {frame, scrollY, pick}. It reports to the viewer with
// postMessage and never reaches Pneuma's server (it cannot: the frame has
// no origin the server accepts and no token).
//
// Reports: ready (title, size), console entries, scroll position, the
// element the person picked, clicks on links to other pages. Answers:
// describe, scroll-to, pick on/off, axe (runs axe-core's source it is sent).
(() => {
  const config = typeof WEBCRAFT_CONFIG === "object" ? WEBCRAFT_CONFIG : {};
  const frame = config.frame || "";
  const post = (message) => parent.postMessage({ ...message, source: "webcraft-bridge", frame }, "*");
  const MAX_TEXT = 300;

  // --- srcset ----------------------------------------------------------------------
  // The viewer hands each img/source's srcset over as data-webcraft-srcset,
  // [[data: URL or remote URL, descriptor]]. Given data: candidates, Chromium
  // always takes the largest (it counts them as cached); blob: URLs made here
  // are picked by width and density as the published site's files would be.
  // Set as the parser inserts the elements, before any later script runs.
  const blobs = new Map();
  const blobUrl = (url) => {
    if (!url.startsWith("data:")) return url;
    if (!blobs.has(url)) {
      const comma = url.indexOf(",");
      const meta = url.slice(5, comma);
      const body = url.slice(comma + 1);
      let bytes;
      if (/;base64$/i.test(meta)) {
        const binary = atob(body);
        bytes = new Uint8Array(binary.length);
        for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
      } else bytes = new TextEncoder().encode(decodeURIComponent(body));
      blobs.set(url, URL.createObjectURL(new Blob([bytes], { type: meta.split(";")[0] || "application/octet-stream" })));
    }
    return blobs.get(url);
  };
  const applySrcset = (el) => {
    let candidates = [];
    try { candidates = JSON.parse(el.getAttribute("data-webcraft-srcset")) || []; } catch { /* none */ }
    el.removeAttribute("data-webcraft-srcset");
    el.setAttribute("srcset", candidates.map(([url, descriptor]) => (descriptor ? `${blobUrl(url)} ${descriptor}` : blobUrl(url))).join(", "));
  };
  const applyAllSrcsets = () => document.querySelectorAll("[data-webcraft-srcset]").forEach(applySrcset);
  const srcsetObserver = new MutationObserver(applyAllSrcsets);
  srcsetObserver.observe(document.documentElement, { childList: true, subtree: true });
  document.addEventListener("DOMContentLoaded", () => {
    applyAllSrcsets();
    srcsetObserver.disconnect();
  });

  // --- console ---------------------------------------------------------------------
  const describeArg = (value) => {
    if (value instanceof Error) return `${value.name}: ${value.message}`;
    if (typeof value === "string") return value;
    try { return JSON.stringify(value); } catch { return String(value); }
  };
  const report = (entry) => post({ type: "console", entry: { at: Date.now(), ...entry } });
  // The page's code in a V8 stack: the first frame that is not this bridge
  // (the viewer names it with a sourceURL). Inline scripts and js/ files
  // carry their file's name and lines (the viewer's sourceURLs again).
  const BRIDGE = /pneuma-webcraft-bridge\.js/;
  const whereIn = (stack) => {
    for (const line of String(stack || "").split("\n").slice(1)) {
      if (BRIDGE.test(line)) continue;
      const found = /\(?([^()\s]+):(\d+):(\d+)\)?\s*$/.exec(line.trim());
      if (found) return { source: found[1], line: Number(found[2]), column: Number(found[3]) };
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
      report({ kind: "resource", message: `${target.tagName.toLowerCase()} failed to load ${url}`.trim() });
      return;
    }
    report({
      kind: "exception",
      message: event.message || describeArg(event.error),
      source: event.filename || "",
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

  async function runAxe(source) {
    if (!window.axe) {
      const script = document.createElement("script");
      script.textContent = source;
      document.documentElement.appendChild(script);
      script.remove();
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
    if (event.source !== parent) return;
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
      } else if (message.type === "axe") answer({ ok: true, data: await runAxe(message.source) });
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
    afterPaint(() => post({ type: "ready", info: describe() }));
  }
  if (document.readyState === "complete") ready();
  else addEventListener("load", ready);
})();
