// The viewer of a Pneuma mode made from the cookiecutter-pneuma-mode template:
// every Markdown page of the workspace in a sidebar, the open page rendered,
// click-to-select with a viewer context for the agent, the `show-file`
// action, and review pins ("annotate": numbered markers on the pinned blocks).
//
// It implements Pneuma's viewer contract (docs/viewer-contract.md in Pneuma):
// the default export has mount(element, ctx), extractContext(selection, files),
// resolveItems(files) and capabilities; mount returns {update, runAction,
// destroy} and, for "annotate" (docs/viewer-contract.md, "Annotate"),
// {showPins, pinPlace, revealPin, capturePin}.
// The mode's name comes from ctx.mode, so renaming the mode needs no change
// here. No build step: this file is served as it is at /modes/<mode>/viewer.js.
// Helpers Pneuma serves to every viewer (docs/viewer-contract.md, "Shared
// helpers") come from /static/lib/viewer-helpers.js.

import { normalizePath } from "/static/lib/viewer-helpers.js";

const CSS_URL = new URL("./viewer.css", import.meta.url).href;
const HIDDEN = /(^|\/)(\.claude|\.pneuma|\.git|node_modules|\.venv)\//;
const MAX_QUOTE_CHARS = 1200;
const WAIT_FOR_PAGE_MS = 2500; // show-file right after a write: the file may not have arrived yet
const FIRST_PAGES = ["welcome.md", "readme.md", "index.md"];

let lastModeName = "mode"; // extractContext's fallback when a selection does not say

// --- pages ------------------------------------------------------------------------

// The agent's instruction files never reach a viewer: the host leaves them
// out of every listing (pneuma.api.AGENT_INSTRUCTION_FILES, the one list).
function isPage(file) {
  return (
    !file.binary &&
    /\.md$/i.test(file.path) &&
    !HIDDEN.test(file.path)
  );
}

function pageOrder(a, b) {
  const rank = (p) => {
    const i = FIRST_PAGES.indexOf(p.toLowerCase());
    return i < 0 ? FIRST_PAGES.length : i;
  };
  return rank(a) - rank(b) || a.localeCompare(b);
}


function pageTitle(content) {
  const match = /^ {0,3}#[ \t]+(.+?)(?:[ \t]+#+)?[ \t]*$/m.exec(content || "");
  return match ? plainInline(match[1]) : null;
}

/** Workspace items for the shell: one per page, titled by its first `#` heading. */
export function resolveItems(files) {
  const pages = (files || []).filter(isPage).sort((a, b) => pageOrder(a.path, b.path));
  return pages.map((file, index) => {
    const title = pageTitle(file.content);
    return { path: file.path, label: title || file.path, index, metadata: { title } };
  });
}

// --- Markdown (the subset the skill promises) ----------------------------------------

const FENCE = /^ {0,3}(`{3,}|~{3,})[ \t]*([^`\s]*)/;
const HEADING = /^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$/;
const RULE = /^ {0,3}([-*_])(?:[ \t]*\1){2,}[ \t]*$/;
const QUOTE = /^ {0,3}> ?(.*)$/;
const ITEM = /^ {0,3}([-*+]|(\d{1,9})[.)])[ \t]+(.*)$/;

function startsBlock(line) {
  return FENCE.test(line) || HEADING.test(line) || RULE.test(line) || QUOTE.test(line) || ITEM.test(line);
}

/** Split Markdown into blocks, each knowing the 1-based line it starts on. */
export function parseBlocks(text) {
  const lines = String(text || "").replace(/\r\n?/g, "\n").split("\n");
  const blocks = [];
  let i = 0;
  while (i < lines.length) {
    const line = lines[i];
    if (!line.trim()) {
      i += 1;
      continue;
    }
    let m;
    if ((m = FENCE.exec(line))) {
      const fence = m[1];
      const body = [];
      let j = i + 1;
      while (j < lines.length) {
        const t = lines[j].trim();
        if (t.length >= fence.length && t === fence[0].repeat(t.length)) break;
        body.push(lines[j]);
        j += 1;
      }
      blocks.push({ kind: "code", line: i + 1, lang: m[2] || "", text: body.join("\n") });
      i = j + 1;
    } else if ((m = HEADING.exec(line))) {
      blocks.push({ kind: "heading", line: i + 1, level: m[1].length, text: m[2] || "" });
      i += 1;
    } else if (RULE.test(line)) {
      blocks.push({ kind: "rule", line: i + 1 });
      i += 1;
    } else if (QUOTE.test(line)) {
      const body = [];
      let j = i;
      while (j < lines.length && (m = QUOTE.exec(lines[j]))) {
        body.push(m[1]);
        j += 1;
      }
      blocks.push({ kind: "quote", line: i + 1, text: body.join("\n") });
      i = j;
    } else if ((m = ITEM.exec(line))) {
      const ordered = m[2] !== undefined;
      const list = { kind: "list", line: i + 1, ordered, start: ordered ? Number(m[2]) : 1, items: [] };
      let j = i;
      while (j < lines.length) {
        const item = ITEM.exec(lines[j]);
        if (item && (item[2] !== undefined) === ordered) {
          list.items.push({ line: j + 1, text: item[3] });
          j += 1;
        } else if (item || !lines[j].trim()) {
          // A blank line ends the list unless another item of the same kind follows.
          const next = lines.slice(j).findIndex((l) => l.trim());
          const follow = next < 0 ? null : ITEM.exec(lines[j + next]);
          if (!item && follow && (follow[2] !== undefined) === ordered && next > 0) {
            j += next;
            continue;
          }
          break;
        } else if (/^[ \t]+\S/.test(lines[j]) || !startsBlock(lines[j])) {
          list.items[list.items.length - 1].text += "\n" + lines[j].trim(); // continuation
          j += 1;
        } else break;
      }
      blocks.push(list);
      i = j;
    } else {
      const body = [line];
      let j = i + 1;
      while (j < lines.length && lines[j].trim() && !startsBlock(lines[j])) {
        body.push(lines[j]);
        j += 1;
      }
      blocks.push({ kind: "paragraph", line: i + 1, text: body.join("\n") });
      i = j;
    }
  }
  return blocks;
}

function escapeHtml(s) {
  return String(s).replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");
}

function plainInline(text) {
  return String(text)
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, "$1")
    .replace(/(\*\*|__|\*|`)/g, "")
    .trim();
}

/** Inline Markdown → HTML; everything is escaped first, so page text can never inject markup. */
function renderInline(text, fromFile) {
  const codes = [];
  let s = String(text).replace(/(`+)([^`]|[^`][\s\S]*?[^`])\1(?!`)/g, (_, ticks, code) => {
    codes.push(code);
    return `\u0000${codes.length - 1}\u0000`;
  });
  s = escapeHtml(s).replace(/\n/g, " ");
  s = s.replace(/\[([^\]]*)\]\(([^)\s]+)\)/g, (whole, label, url) => {
    if (/^\s*(javascript|data|vbscript):/i.test(url)) return label;
    const external = /^[a-z][a-z0-9+.-]*:/i.test(url) || url.startsWith("//");
    if (external || url.startsWith("#")) {
      return `<a href="${url}" target="_blank" rel="noopener noreferrer">${label}</a>`;
    }
    const dir = fromFile.includes("/") ? fromFile.slice(0, fromFile.lastIndexOf("/") + 1) : "";
    const page = normalizePath(dir + url.split("#")[0].replace(/&amp;/g, "&"));
    return `<a href="#" data-page="${escapeHtml(page || "")}">${label}</a>`;
  });
  s = s.replace(/\*\*(?=\S)([\s\S]*?\S)\*\*/g, "<strong>$1</strong>");
  s = s.replace(/(^|[^\w])__(?=\S)([\s\S]*?\S)__(?!\w)/g, "$1<strong>$2</strong>");
  s = s.replace(/\*(?=[^\s*])([^*]*?[^\s*])\*/g, "<em>$1</em>");
  s = s.replace(/(^|[^\w])_(?=[^\s_])([^_]*?[^\s_])_(?!\w)/g, "$1<em>$2</em>");
  return s.replace(/\u0000(\d+)\u0000/g, (_, n) => `<code>${escapeHtml(codes[Number(n)])}</code>`);
}

function renderPage(content, file) {
  const html = [];
  for (const block of parseBlocks(content)) {
    const at = `data-line="${block.line}"`;
    switch (block.kind) {
      case "heading":
        html.push(`<h${block.level} data-block="heading" ${at}>${renderInline(block.text, file)}</h${block.level}>`);
        break;
      case "paragraph":
        html.push(`<p data-block="paragraph" ${at}>${renderInline(block.text, file)}</p>`);
        break;
      case "quote":
        html.push(`<blockquote data-block="quote" ${at}>${renderInline(block.text, file)}</blockquote>`);
        break;
      case "code": {
        const label = block.lang ? `<span class="pm-lang">${escapeHtml(block.lang)}</span>` : "";
        html.push(`<pre data-block="code" ${at}>${label}<code>${escapeHtml(block.text)}</code></pre>`);
        break;
      }
      case "rule":
        html.push("<hr>");
        break;
      case "list": {
        const tag = block.ordered ? "ol" : "ul";
        const start = block.ordered && block.start !== 1 ? ` start="${block.start}"` : "";
        const items = block.items.map(
          (item) => `<li data-block="list-item" data-line="${item.line}">${renderInline(item.text, file)}</li>`,
        );
        html.push(`<${tag}${start}>${items.join("")}</${tag}>`);
        break;
      }
    }
  }
  return html.join("\n");
}

// --- viewer context ------------------------------------------------------------------------

function attr(s) {
  return String(s).replace(/&/g, "&amp;").replace(/"/g, "&quot;").replace(/</g, "&lt;").replace(/\n/g, " ");
}

function quote(text) {
  let t = String(text).replace(/\r\n?/g, "\n").trim();
  const cut = t.length > MAX_QUOTE_CHARS;
  if (cut) t = t.slice(0, MAX_QUOTE_CHARS);
  const lines = t.split("\n").map((line) => (line.trim() ? "> " + line.trimEnd() : ">"));
  if (cut) lines.push("> […]");
  return lines.join("\n").replace(/<\/viewer-context/gi, "&lt;/viewer-context");
}

/** The <viewer-context> put before the person's next message while `selection` is set. */
export function extractContext(selection, files) {
  if (!selection || !selection.file) return "";
  let open = `<viewer-context mode="${attr(selection.mode || lastModeName)}" file="${attr(selection.file)}"`;
  if (selection.line) open += ` line="${Number(selection.line)}"`;
  if (selection.block) open += ` block="${attr(selection.block)}"`;
  const body = selection.text ? `\nSelected text:\n${quote(selection.text)}\n` : "\n";
  return `${open}>${body}</viewer-context>`;
}

/** A block's own text, without the review markers drawn in it. */
function textOf(block) {
  return [...block.childNodes].filter((node) => !node.classList?.contains("pm-pin"))
    .map((node) => node.textContent).join("");
}

function shorten(text, n) {
  const t = String(text).replace(/\s+/g, " ").trim();
  return t.length > n ? t.slice(0, n - 1) + "…" : t;
}

// --- the viewer instance ------------------------------------------------------------------

let cssUsers = 0;

class PageViewer {
  constructor(element, ctx) {
    this.ctx = ctx;
    this.mode = ctx.mode?.name || lastModeName;
    lastModeName = this.mode;
    this.pages = new Map(); // path → content
    this.active = null;
    this.selection = null;
    this.flashTimer = 0;
    this.pins = []; // the shell's review pins (showPins)

    if (cssUsers++ === 0) {
      const link = document.createElement("link");
      link.rel = "stylesheet";
      link.href = CSS_URL;
      link.dataset.pneumaTemplateViewer = "";
      document.head.appendChild(link);
    }
    this.root = document.createElement("div");
    this.root.className = "pm-viewer";
    this.root.dataset.mode = this.mode;
    this.root.innerHTML =
      '<nav class="pm-nav" aria-label="Pages"></nav>' +
      '<div class="pm-scroll"><article class="pm-page"></article></div>';
    this.nav = this.root.querySelector(".pm-nav");
    this.scroller = this.root.querySelector(".pm-scroll");
    this.article = this.root.querySelector(".pm-page");
    element.appendChild(this.root);

    this.onClick = this.onClick.bind(this);
    this.root.addEventListener("click", this.onClick);
    this.load(ctx.files);
    this.open(this.firstPage());
  }

  load(files) {
    this.pages = new Map((files || []).filter(isPage).map((f) => [f.path, f.content || ""]));
  }

  firstPage() {
    return [...this.pages.keys()].sort(pageOrder)[0] || null;
  }

  renderNav() {
    const items = resolveItems([...this.pages].map(([path, content]) => ({ path, content })));
    this.nav.innerHTML = items
      .map(
        (item) =>
          `<button type="button" class="pm-nav-item" data-path="${escapeHtml(item.path)}"` +
          ` aria-current="${item.path === this.active}" title="${escapeHtml(item.path)}">` +
          `<span class="pm-nav-title">${escapeHtml(item.metadata.title || item.path)}</span>` +
          `<span class="pm-nav-path">${escapeHtml(item.path)}</span></button>`,
      )
      .join("");
  }

  open(path, { keepScroll = false } = {}) {
    const top = this.scroller.scrollTop;
    this.active = path && this.pages.has(path) ? path : null;
    if (this.active) {
      this.article.innerHTML = renderPage(this.pages.get(this.active), this.active);
      this.article.dataset.file = this.active;
      this.ctx.setActiveFile?.(this.active);
    } else {
      this.article.innerHTML =
        '<p class="pm-empty">No pages yet. Ask the agent to write one: every <code>.md</code> file appears here.</p>';
      delete this.article.dataset.file;
    }
    this.scroller.scrollTop = keepScroll ? top : 0;
    this.markSelection();
    this.drawPins();
    this.renderNav();
  }

  // --- annotate: the shell's pins, drawn on the open page ---

  /** The shell's pins changed (or the page did): numbered markers on the pinned blocks. */
  showPins(pins) {
    this.pins = Array.isArray(pins) ? pins : [];
    this.drawPins();
  }

  drawPins() {
    for (const marker of this.article.querySelectorAll(".pm-pin")) marker.remove();
    for (const pin of this.pins) {
      const selection = pin.selection || {};
      if (selection.file !== this.active || !selection.line) continue;
      const block = this.article.querySelector(`[data-line="${Number(selection.line)}"]`);
      if (!block) continue;
      const marker = document.createElement("span");
      marker.className = `pm-pin pm-pin--${pin.status === "addressed" ? "addressed" : "open"}`;
      marker.dataset.pin = String(pin.number);
      marker.textContent = pin.status === "addressed" ? "✓" : String(pin.number);
      marker.title = pin.comment || "";
      block.classList.add("pm-pinned");
      block.prepend(marker);
    }
    for (const block of this.article.querySelectorAll(".pm-pinned")) {
      if (!block.querySelector(".pm-pin")) block.classList.remove("pm-pinned");
    }
  }

  /** What the pinned place is now: its first source line (the shell marks a
   * sent pin addressed when this changes after the agent's turn). */
  pinPlace(selection, files) {
    const file = (files || []).find((f) => f.path === selection?.file);
    if (!file || typeof file.content !== "string" || !selection.line) return "";
    return file.content.replace(/\r\n?/g, "\n").split("\n")[selection.line - 1] ?? "";
  }

  /** The person clicked the pin in the review list: its page, scrolled to the block. */
  revealPin(pin) {
    const selection = pin?.selection || {};
    if (!this.pages.has(selection.file)) return false;
    if (selection.file !== this.active) this.open(selection.file);
    const block = this.article.querySelector(`[data-line="${Number(selection.line)}"]`);
    if (!block) return false;
    block.scrollIntoView({ block: "center" });
    block.classList.add("pm-flash");
    clearTimeout(this.flashTimer);
    this.flashTimer = setTimeout(() => block.classList.remove("pm-flash"), 1600);
    return true;
  }

  // Files changed on disk: `files` is the shell's full snapshot.
  update(files, changes) {
    this.load(files);
    if (!this.active || !this.pages.has(this.active)) {
      this.open(this.firstPage());
      return;
    }
    if ((changes || []).some((c) => c.path === this.active)) this.open(this.active, { keepScroll: true });
    else this.renderNav();
  }

  onClick(event) {
    const navItem = event.target.closest(".pm-nav-item");
    if (navItem) {
      this.open(navItem.dataset.path);
      return;
    }
    const link = event.target.closest("a[data-page]");
    if (link) {
      event.preventDefault();
      if (this.pages.has(link.dataset.page)) this.open(link.dataset.page);
      return;
    }
    if (event.target.closest("a")) return; // external links open in a new tab
    const block = event.target.closest("[data-block]");
    if (!block || !this.article.contains(block) || !this.active) return;
    const range = document.getSelection();
    const dragged = range && !range.isCollapsed && block.contains(range.anchorNode) ? range.toString() : "";
    const same = this.selection && this.selection.file === this.active && this.selection.line === Number(block.dataset.line);
    if (same && !dragged) {
      this.select(null);
      return;
    }
    this.select(block, dragged);
  }

  select(block, text = "") {
    if (!block) {
      this.selection = null;
    } else {
      const kind = block.dataset.block;
      const line = Number(block.dataset.line);
      const body = text || textOf(block);
      this.selection = {
        mode: this.mode,
        file: this.active,
        line,
        block: kind,
        text: body,
        label: `${this.active}:${line} · ${kind} “${shorten(body, 40)}”`,
      };
    }
    this.markSelection();
    this.ctx.setSelection?.(this.selection);
  }

  markSelection() {
    for (const el of this.article.querySelectorAll(".pm-selected")) el.classList.remove("pm-selected");
    const s = this.selection;
    if (s && s.file === this.active) {
      this.article.querySelector(`[data-line="${s.line}"]`)?.classList.add("pm-selected");
    }
  }

  headings() {
    return [...this.article.querySelectorAll('[data-block="heading"]')].map((h) => ({
      level: Number(h.tagName.slice(1)),
      text: textOf(h).trim(),
      line: Number(h.dataset.line),
    }));
  }

  async waitForPage(path) {
    const deadline = Date.now() + WAIT_FOR_PAGE_MS;
    while (!this.pages.has(path) && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    return this.pages.has(path);
  }

  async showFile(params) {
    const file = params.file;
    if (typeof file !== "string" || !file.trim()) {
      return { success: false, message: "show-file needs 'file': a .md path relative to the workspace" };
    }
    const path = normalizePath(file.trim());
    if (!path || !(await this.waitForPage(path))) {
      const pages = [...this.pages.keys()].sort(pageOrder);
      return {
        success: false,
        message: `No page '${file}' in the workspace (pages: ${pages.join(", ") || "none"})`,
        data: { pages },
      };
    }
    this.open(path);
    const headings = this.headings();
    let message = `Showing ${path}`;
    let target = null;
    if (typeof params.heading === "string" && params.heading.trim()) {
      const wanted = plainInline(params.heading).toLowerCase();
      const found = headings.find((h) => h.text.toLowerCase() === wanted) ||
        headings.find((h) => h.text.toLowerCase().startsWith(wanted));
      if (found) {
        target = found.text;
        const el = this.article.querySelector(`[data-line="${found.line}"]`);
        el.scrollIntoView({ block: "start" });
        el.classList.add("pm-flash");
        clearTimeout(this.flashTimer);
        this.flashTimer = setTimeout(() => el.classList.remove("pm-flash"), 1600);
        message += ` at “${found.text}”`;
      } else {
        message += `; it has no heading “${params.heading}”, so the top is shown`;
      }
    }
    return { success: true, message, data: { file: path, heading: target, headings } };
  }

  async runAction(actionId, params) {
    if (actionId === "show-file") return this.showFile(params || {});
    return { success: false, message: `'${actionId}' is not supported by the ${this.mode} viewer` };
  }

  destroy() {
    clearTimeout(this.flashTimer);
    this.root.removeEventListener("click", this.onClick);
    this.root.remove();
    if (--cssUsers === 0) document.querySelector("link[data-pneuma-template-viewer]")?.remove();
  }
}

export default {
  mount(element, ctx) {
    const viewer = new PageViewer(element, ctx);
    return {
      update: (files, changes) => viewer.update(files, changes),
      runAction: (actionId, params) => viewer.runAction(actionId, params),
      showPins: (pins) => viewer.showPins(pins),
      pinPlace: (selection, files) => viewer.pinPlace(selection, files),
      revealPin: (pin) => viewer.revealPin(pin),
      // A page of text needs no picture: the pin's context says it all.
      capturePin: async () => null,
      destroy: () => viewer.destroy(),
    };
  },
  // "annotate": the shell's Annotate switch turns each selection into a pin.
  capabilities: ["annotate"],
  extractContext,
  resolveItems,
};
