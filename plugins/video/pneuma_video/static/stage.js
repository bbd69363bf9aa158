// Runs INSIDE a scene's frame (opaque origin, inlined into the stage
// document by routes.py after the timeline runtime). It puts the scene's
// fragment on the stage when the player posts it, and reports to the
// player what the person points at and the text they edit in place.
// Talks only to the page that holds the frame (postMessage); the player
// treats every answer as untrusted data.
(function installPneumaStage() {
  "use strict";
  const MAX_TEXT = 300;
  const post = (message) => parent.postMessage({ ...message, source: "pneuma-video-stage" }, "*");
  let pointing = true;
  let editing = null; // {element, index, oldText}
  let marked = null;
  // A shared file's page runs only scripts with its nonce: the scene's own get it too.
  const nonce = document.currentScript ? document.currentScript.nonce : "";

  function load(message) {
    const body = document.body;
    body.style.width = `${Number(message.width) || 1280}px`;
    body.style.height = `${Number(message.height) || 720}px`;
    body.style.background = typeof message.background === "string" ? message.background : "#000";
    if (message.fonts) {
      // The CJK faces the player fetched for this scene's text (cjk-font.js).
      const style = document.createElement("style");
      style.textContent = String(message.fonts);
      document.head.append(style);
    }
    body.innerHTML = String(message.html || "");
    // Scripts set through innerHTML do not run: run each, in order, as the
    // parser would have (inline ones at once).
    for (const old of [...body.querySelectorAll("script")]) {
      const script = document.createElement("script");
      for (const attr of old.attributes) script.setAttribute(attr.name, attr.value);
      if (nonce) script.nonce = nonce;
      script.textContent = old.textContent;
      old.replaceWith(script);
    }
    pointing = message.pointing !== false;
    post({ type: "pneuma-video:loaded", errors: (window.pneuma && window.pneuma.errors) || [] });
  }

  // --- what the person points at -------------------------------------------------
  function selectorOf(element) {
    const parts = [];
    for (let el = element; el && el !== document.body && el.nodeType === 1; el = el.parentElement) {
      if (el.id) {
        parts.unshift(`#${CSS.escape(el.id)}`);
        break;
      }
      let part = el.localName;
      const cls = [...el.classList].find((c) => !c.startsWith("pneuma-"));
      if (cls) part += `.${CSS.escape(cls)}`;
      const parent = el.parentElement;
      if (parent) {
        const same = [...parent.children].filter((c) => c.localName === el.localName);
        if (same.length > 1) part += `:nth-of-type(${same.indexOf(el) + 1})`;
      }
      parts.unshift(part);
    }
    return parts.join(" > ");
  }

  // The scene's own text nodes in document order, as source-edit.js's
  // htmlTextNodes counts them in the file: no script or style content, no
  // whitespace-only runs.
  function textNodes() {
    const found = [];
    const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT, {
      acceptNode(node) {
        const parentName = node.parentElement ? node.parentElement.localName : "";
        if (parentName === "script" || parentName === "style") return NodeFilter.FILTER_REJECT;
        return node.data.trim() ? NodeFilter.FILTER_ACCEPT : NodeFilter.FILTER_REJECT;
      },
    });
    for (let node = walker.nextNode(); node; node = walker.nextNode()) found.push(node);
    return found;
  }

  function describe(element) {
    const box = element.getBoundingClientRect();
    const text = (element.innerText || element.textContent || "").replace(/\s+/g, " ").trim();
    return {
      selector: selectorOf(element),
      tag: element.localName,
      text: text.slice(0, MAX_TEXT),
      box: { x: Math.round(box.x), y: Math.round(box.y), width: Math.round(box.width), height: Math.round(box.height) },
    };
  }

  function mark(element) {
    if (marked) marked.style.removeProperty("outline");
    marked = element;
    if (element) element.style.setProperty("outline", "3px solid rgba(255, 179, 71, 0.95)");
  }

  document.addEventListener("click", (event) => {
    if (editing || !pointing) return;
    const element = event.target instanceof Element ? event.target : null;
    if (!element || element === document.body || element === document.documentElement) return;
    event.preventDefault();
    event.stopPropagation();
    mark(element);
    post({ type: "pneuma-video:pick", ...describe(element) });
  }, true);

  // --- edit in place ---------------------------------------------------------------
  // Only an element whose whole content is one text node: the edit is then
  // that node's text, which the player writes back to the same node of the file.
  document.addEventListener("dblclick", (event) => {
    if (editing || !pointing) return;
    const element = event.target instanceof Element ? event.target : null;
    if (!element || element.childNodes.length !== 1 || element.firstChild.nodeType !== 3) return;
    const index = textNodes().indexOf(element.firstChild);
    if (index < 0) return;
    event.preventDefault();
    editing = { element, index, oldText: element.firstChild.data };
    element.setAttribute("contenteditable", "plaintext-only");
    element.focus();
    post({ type: "pneuma-video:edit-start", index, selector: selectorOf(element) });
  }, true);

  function finishEdit(keep) {
    if (!editing) return;
    const { element, index, oldText } = editing;
    editing = null;
    const newText = element.textContent;
    element.removeAttribute("contenteditable");
    if (!keep) element.textContent = oldText;
    post({ type: "pneuma-video:edit", index, oldText, newText: keep ? newText : oldText, cancelled: !keep });
  }

  document.addEventListener("keydown", (event) => {
    if (editing) {
      if (event.key === "Enter" && !event.shiftKey) {
        event.preventDefault();
        finishEdit(true);
      } else if (event.key === "Escape") {
        event.preventDefault();
        finishEdit(false);
      }
      return;
    }
    // The player's keys work while the stage has the focus too.
    if ([" ", "ArrowLeft", "ArrowRight", "Home", "End"].includes(event.key)) {
      event.preventDefault();
      post({ type: "pneuma-video:key", key: event.key, shiftKey: event.shiftKey });
    }
  }, true);
  document.addEventListener("focusout", () => finishEdit(true), true);

  window.addEventListener("message", (event) => {
    if (event.source !== parent) return;
    const message = event.data || {};
    if (message.type === "pneuma-video:load") load(message);
    else if (message.type === "pneuma-video:pointing") pointing = !!message.on;
    else if (message.type === "pneuma-video:mark") {
      let element = null;
      try {
        element = message.selector ? document.querySelector(String(message.selector)) : null;
      } catch { /* not a selector: mark nothing */ }
      mark(element);
    }
  });
})();
