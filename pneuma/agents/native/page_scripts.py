"""JavaScript the browser client evaluates in a page (written for Pneuma).

``READABLE_TEXT``: a small readable-text extractor. Every paragraph-like
element scores points (length, commas) that flow to its parent (full) and
grandparent (half); the container with the best score, discounted by the
share of its text inside links and by boilerplate-looking ids/classes,
is taken as the content, together with siblings that score nearly as well.
It is then written out as Markdown-ish text (headings, lists, quotes, code)
skipping hidden elements, navigation, forms and scripts. Small pages with
no clear winner fall back to the whole body.

``XPATH_SCAN``: interactive elements with a unique XPath, tag, text and box.
"""

READABLE_TEXT = r"""
() => {
  const SKIP = new Set(["SCRIPT", "STYLE", "NOSCRIPT", "TEMPLATE", "SVG", "CANVAS", "IFRAME",
    "NAV", "FOOTER", "ASIDE", "FORM", "BUTTON", "SELECT", "INPUT", "TEXTAREA", "OBJECT", "EMBED"]);
  const BOILER = /(^|[\s_-])(comment|footer|sidebar|menu|nav|navbar|banner|cookie|consent|advert|ads?|promo|share|social|related|breadcrumbs?|popup|modal|masthead|subscribe|newsletter)([\s_-]|$)/i;
  const PARA = "p, pre, blockquote, td, li, dd, h2, h3";
  const label = (el) => ((el.id || "") + " " + (typeof el.className === "string" ? el.className : ""));
  const hidden = (el) => {
    if (el.hidden || el.getAttribute("aria-hidden") === "true") return true;
    const style = getComputedStyle(el);
    return style.display === "none" || style.visibility === "hidden";
  };
  const squash = (s) => s.replace(/\s+/g, " ").trim();
  const scores = new Map();
  for (const p of document.body ? document.body.querySelectorAll(PARA) : []) {
    const text = squash(p.textContent || "");
    if (text.length < 25) continue;
    const points = 1 + (text.split(/[,，、]/).length - 1) + Math.min(Math.floor(text.length / 100), 3);
    const parent = p.parentElement;
    if (parent) scores.set(parent, (scores.get(parent) || 0) + points);
    const grand = parent && parent.parentElement;
    if (grand) scores.set(grand, (scores.get(grand) || 0) + points / 2);
  }
  const linkDensity = (el) => {
    const total = squash(el.textContent || "").length || 1;
    let links = 0;
    for (const a of el.querySelectorAll("a")) links += squash(a.textContent || "").length;
    return links / total;
  };
  let best = null, bestScore = 0;
  for (const [el, raw] of scores) {
    if (el === document.documentElement || hidden(el)) continue;
    let score = raw * (1 - linkDensity(el));
    const tag = el.tagName;
    if (tag === "ARTICLE" || tag === "MAIN" || el.getAttribute("role") === "main") score *= 1.4;
    if (BOILER.test(label(el))) score *= 0.25;
    scores.set(el, score);
    if (score > bestScore) { best = el; bestScore = score; }
  }
  let roots = [];
  if (best && bestScore >= 3) {
    const parent = best.parentElement;
    for (const sibling of parent ? parent.children : [best]) {
      if (sibling === best || (scores.get(sibling) || 0) >= bestScore * 0.25) roots.push(sibling);
    }
  } else {
    roots = [document.body || document.documentElement];
  }
  const lines = [];
  const plain = [];
  let inline = "";
  const flush = (prefix = "") => {
    const text = squash(inline);
    inline = "";
    if (!text) return;
    lines.push(prefix + text);
    plain.push(text);
  };
  const walk = (node, depth) => {
    if (node.nodeType === Node.TEXT_NODE) { inline += node.textContent; return; }
    if (node.nodeType !== Node.ELEMENT_NODE) return;
    const el = node;
    if (SKIP.has(el.tagName) || hidden(el)) return;
    if (depth > 0 && BOILER.test(label(el)) && linkDensity(el) > 0.3) return;
    const tag = el.tagName;
    const heading = /^H([1-6])$/.exec(tag);
    if (heading) { flush(); inline = el.textContent; flush("#".repeat(+heading[1]) + " "); return; }
    if (tag === "PRE") { flush(); const code = el.textContent.replace(/\s+$/, "");
      if (code) { lines.push("```\n" + code + "\n```"); plain.push(code); } return; }
    if (tag === "LI") { flush(); for (const c of el.childNodes) walk(c, depth + 1); flush("- "); return; }
    if (tag === "BLOCKQUOTE") { flush(); for (const c of el.childNodes) walk(c, depth + 1); flush("> "); return; }
    if (tag === "BR") { inline += "\n"; return; }
    if (tag === "IMG") { const alt = squash(el.getAttribute("alt") || ""); if (alt) inline += ` [image: ${alt}] `; return; }
    const block = /^(P|DIV|SECTION|ARTICLE|MAIN|HEADER|TABLE|TR|UL|OL|DL|DT|DD|FIGURE|FIGCAPTION|HR)$/.test(tag);
    if (block) flush();
    for (const child of el.childNodes) walk(child, depth + 1);
    if (tag === "TD" || tag === "TH") inline += " | ";
    if (block) flush();
  };
  for (const root of roots) walk(root, 0);
  flush();
  const title = squash(document.title || "");
  return {
    title,
    url: location.href,
    markdown: lines.join("\n\n"),
    text: plain.join("\n\n"),
    length: plain.join("\n\n").length,
  };
}
"""

XPATH_SCAN = r"""
(scope) => {
  const SELECTOR = 'a[href], button, input:not([type="hidden"]), textarea, select, summary, ' +
    '[role="button"], [role="link"], [role="checkbox"], [role="tab"], [role="menuitem"], ' +
    '[onclick], [contenteditable=""], [contenteditable="true"]';
  const xpathOf = (el) => {
    if (el.id && !/["']/.test(el.id) && document.querySelectorAll("#" + CSS.escape(el.id)).length === 1) {
      return `//*[@id="${el.id}"]`;
    }
    const parts = [];
    for (let n = el; n && n.nodeType === Node.ELEMENT_NODE; n = n.parentElement) {
      let index = 1;
      for (let s = n.previousElementSibling; s; s = s.previousElementSibling) {
        if (s.tagName === n.tagName) index++;
      }
      parts.unshift(`${n.tagName.toLowerCase()}[${index}]`);
    }
    return "/" + parts.join("/");
  };
  const vw = window.innerWidth, vh = window.innerHeight;
  const out = [];
  for (const el of document.querySelectorAll(SELECTOR)) {
    const style = getComputedStyle(el);
    if (style.display === "none" || style.visibility === "hidden") continue;
    const r = el.getBoundingClientRect();
    if (r.width === 0 && r.height === 0) continue;
    if (scope !== "document" && (r.bottom < 0 || r.right < 0 || r.top > vh || r.left > vw)) continue;
    const text = (el.innerText || el.value || el.getAttribute("aria-label") ||
                  el.getAttribute("placeholder") || el.getAttribute("title") || "")
      .replace(/\s+/g, " ").trim().slice(0, 120);
    const item = { xpath: xpathOf(el), tag: el.tagName.toLowerCase(), text,
      bbox: { x: Math.round(r.x), y: Math.round(r.y), w: Math.round(r.width), h: Math.round(r.height) } };
    if (el.type && el.tagName !== "BUTTON") item.type = el.type;
    if (el.name) item.name = el.name;
    if (el.href) item.href = el.href;
    out.push(item);
    if (out.length >= 500) break;
  }
  return out;
}
"""

OUTER_HTML = r"""
(xpath) => {
  if (!xpath) return document.documentElement.outerHTML;
  const hit = document.evaluate(xpath, document, null, XPathResult.FIRST_ORDERED_NODE_TYPE, null);
  const node = hit.singleNodeValue;
  return node ? (node.outerHTML || node.textContent) : null;
}
"""
