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
// links to other pages, where the pinned elements are, the text the person
// edited in place. Answers: describe, scroll-to, pick on/off, axe, pins,
// flash, revert-edit.
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
    ".webcraft-picked{outline:2px solid #e8590c!important;outline-offset:1px}" +
    ".webcraft-flash{outline:3px solid #e8590c!important;outline-offset:2px;transition:outline-color .3s}" +
    ".webcraft-editing{outline:2px solid #5b8def!important;outline-offset:2px;cursor:text}";
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
      if (event.detail > 1) return; // a double-click picks once (each pick may become a pin)
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
    if (editing && editing.el.contains(el)) { event.preventDefault(); return; } // placing the caret, not following
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

  // --- pins: where the pinned elements are now -----------------------------------------
  // The viewer draws the numbered markers over the frame (the page's own DOM
  // stays as the site made it); the bridge tells it where the elements are,
  // again after each scroll or resize.
  let pins = []; // [{n, selector}]
  let pinFrame = 0;
  const elementAt = (selector) => {
    try { return typeof selector === "string" && selector ? document.querySelector(selector) : null; } catch { return null; }
  };
  function reportPins() {
    pinFrame = 0;
    const boxes = pins.map((pin) => {
      const el = elementAt(pin.selector);
      if (!el) return { n: pin.n, found: false };
      const r = el.getBoundingClientRect();
      return { n: pin.n, found: true, x: Math.round(r.left), y: Math.round(r.top), width: Math.round(r.width), height: Math.round(r.height) };
    });
    post({ type: "pin-boxes", boxes });
  }
  const pinsMoved = () => { if (pins.length && !pinFrame) pinFrame = requestAnimationFrame(reportPins); };
  addEventListener("scroll", pinsMoved, { passive: true });
  addEventListener("resize", pinsMoved);
  function flash(selector) {
    const el = elementAt(selector);
    if (!el) return false;
    el.scrollIntoView({ block: "center" });
    el.classList.add("webcraft-flash");
    setTimeout(() => el.classList.remove("webcraft-flash"), 1600);
    return true;
  }

  // --- editing text in place -----------------------------------------------------------
  // A double-click makes the element under the pointer editable (plain text
  // only); Enter or leaving it commits, Esc puts the text back. The bridge
  // reports each run of text that changed with its text before, and which
  // of the document's text nodes with that same text it was (n-th of total),
  // so the viewer can find those bytes in the page's source; markup never
  // changes here.
  const NOT_TEXT = new Set(["SCRIPT", "STYLE", "NOSCRIPT", "TEXTAREA", "TITLE", "TEMPLATE"]);
  let editing = null; // {el, gaps, shape, clones, attribute}
  function textNodesIn(root) {
    const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT, {
      acceptNode: (node) => (node.parentElement && NOT_TEXT.has(node.parentElement.tagName) ? NodeFilter.FILTER_REJECT : NodeFilter.FILTER_ACCEPT),
    });
    const nodes = [];
    for (let node = walker.nextNode(); node; node = walker.nextNode()) nodes.push(node);
    return nodes;
  }
  // The element's markup as tags only, and its text between them (one entry per gap).
  function layout(el) {
    const tags = [];
    const gaps = [{ nodes: [], text: "" }];
    const walk = (node) => {
      for (const child of node.childNodes) {
        if (child.nodeType === 3) {
          gaps[gaps.length - 1].nodes.push(child);
          gaps[gaps.length - 1].text += child.data;
        } else if (child.nodeType === 1) {
          tags.push(`<${child.tagName}>`);
          gaps.push({ nodes: [], text: "" });
          if (!NOT_TEXT.has(child.tagName)) walk(child);
          tags.push(`</${child.tagName}>`);
          gaps.push({ nodes: [], text: "" });
        } else if (child.nodeType === 8) {
          tags.push("<!---->"); // a comment parts two runs of text in the source too
          gaps.push({ nodes: [], text: "" });
        }
      }
    };
    walk(el);
    return { shape: tags.join(""), gaps };
  }
  function occurrence(node, all) {
    const same = all.filter((other) => other.data === node.data);
    return { index: same.indexOf(node), total: same.length };
  }
  function startEdit(el) {
    const all = textNodesIn(document.documentElement);
    const { shape, gaps } = layout(el);
    editing = {
      el, shape, attribute: el.getAttribute("contenteditable"),
      clones: [...el.childNodes].map((node) => node.cloneNode(true)),
      gaps: gaps.map((gap) => ({
        text: gap.text,
        // A parsed document has one text node per run; more means a script made it.
        node: gap.nodes.length === 1 ? gap.nodes[0] : null,
        where: gap.nodes.length === 1 ? occurrence(gap.nodes[0], all) : null,
      })),
    };
    el.setAttribute("contenteditable", "plaintext-only");
    el.classList.add("webcraft-editing");
    el.focus();
    post({ type: "edit-start", selector: selectorOf(el) });
  }
  function stopEditing() {
    const edit = editing;
    editing = null;
    if (edit.attribute === null) edit.el.removeAttribute("contenteditable");
    else edit.el.setAttribute("contenteditable", edit.attribute);
    edit.el.classList.remove("webcraft-editing");
    return edit;
  }
  function restore(edit) {
    edit.el.replaceChildren(...edit.clones);
  }
  let lastEdit = null;
  function commitEdit() {
    const edit = stopEditing();
    const now = layout(edit.el);
    const selector = selectorOf(edit.el);
    if (now.shape !== edit.shape) {
      restore(edit);
      post({ type: "edit", selector, refused: "markup" });
      return;
    }
    const changes = [];
    for (let i = 0; i < edit.gaps.length; i++) {
      const before = edit.gaps[i];
      const after = now.gaps[i].text;
      if (after === before.text) continue;
      if (!before.node) {
        restore(edit);
        post({ type: "edit", selector, refused: "script" });
        return;
      }
      changes.push({ before: before.text, after, index: before.where.index, total: before.where.total });
    }
    lastEdit = edit;
    post({ type: "edit", selector, changes });
  }
  function cancelEdit() {
    restore(stopEditing());
    post({ type: "edit", selector: "", changes: [] });
  }
  document.addEventListener("dblclick", (event) => {
    const el = event.target;
    if (pick || editing || !el || el.nodeType !== 1 || el.isContentEditable) return;
    if (el === document.body || el === document.documentElement || NOT_TEXT.has(el.tagName)) return;
    if (!textNodesIn(el).some((node) => node.data.trim())) return;
    event.preventDefault();
    startEdit(el);
  }, true);
  document.addEventListener("keydown", (event) => {
    if (!editing || !editing.el.contains(event.target)) return;
    if (event.key === "Enter") {
      event.preventDefault();
      commitEdit();
    } else if (event.key === "Escape") {
      event.preventDefault();
      cancelEdit();
    }
  }, true);
  // Undo and redo of the person's hand edits are the shell's (Ctrl-Z outside
  // a text field), but keys pressed in this frame never reach it: tell the viewer.
  const inTextField = (el) => !!el && (el.isContentEditable || /^(INPUT|TEXTAREA|SELECT)$/.test(el.tagName || ""));
  document.addEventListener("keydown", (event) => {
    if (editing || !(event.ctrlKey || event.metaKey) || event.altKey || inTextField(event.target)) return;
    const key = event.key.toLowerCase();
    if (key === "z" || key === "y") post({ type: "key", key, shift: event.shiftKey });
  });
  document.addEventListener("focusout", (event) => {
    if (editing && event.target === editing.el) commitEdit();
  }, true);
  // Focus gone to the shell (or another window): the edit is over too.
  addEventListener("blur", () => { if (editing) commitEdit(); });

  addEventListener("message", async (event) => {
    if (event.source !== parent || event.origin !== parentOrigin) return;
    const message = event.data || {};
    const answer = (result) => post({ type: "reply", id: message.id, result });
    try {
      if (message.type === "pins") {
        pins = (Array.isArray(message.pins) ? message.pins : []).slice(0, 200)
          .map((pin) => ({ n: Number(pin.n) || 0, selector: String(pin.selector || "") }));
        reportPins();
      } else if (message.type === "flash") answer({ ok: flash(message.selector) });
      else if (message.type === "revert-edit") {
        if (lastEdit) restore(lastEdit);
        lastEdit = null;
      } else if (message.type === "pick") {
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
