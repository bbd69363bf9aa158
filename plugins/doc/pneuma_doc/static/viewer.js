// The doc mode's viewer: every .md file of the workspace as a tab, rendered
// as GitHub-flavoured Markdown, with a table of contents, section-aware
// viewer context and in-place re-rendering when files change on disk.
//
// Implements the viewer contract (docs/viewer-contract.md): the default
// export has mount(element, ctx), extractContext(selection, files) and
// resolveItems(files); mount returns {update, runAction, destroy}.
//
// Markdown is parsed by the shell's one markdown-it (/static/lib/markdown-it.js,
// pinned in pneuma/web/package.json); highlight.js with the languages the
// skill promises is bundled at setup into ./vendor/doc-vendor.js by
// `npm run build` in plugins/doc/web/.

import { normalizePath, sharedStylesheet } from "/static/lib/viewer-helpers.js";
import { translator } from "./i18n.js";
import { extractContext } from "./context.js";
import { editingInPlace } from "./doc-edit.js";
import { docPins } from "./doc-pins.js";
import {
  dirname, escapeAttr, escapeHtml, findHeading, githubSlug, isMarkdown, loadRenderer, sortTabs,
} from "./markdown.js";

const CSS_URL = new URL("./viewer.css", import.meta.url).href;
const TOC_LEVELS = [2, 3, 4];
const NAV_WAIT_MS = 2500; // how long navigate-to waits for a file that is still being written
const RENDERED = Symbol("rendered HTML");
const IMAGE_EXT = /\.(png|jpe?g|gif|svg|webp|avif|bmp|ico)$/i;

const stylesheet = sharedStylesheet(CSS_URL, { "data-pneuma-doc": "" });

function resolveItems(files) {
  const paths = sortTabs((files || []).filter((f) => !f.binary && isMarkdown(f.path)).map((f) => f.path));
  const byPath = new Map((files || []).map((f) => [f.path, f]));
  return paths.map((path, index) => {
    const content = byPath.get(path)?.content || "";
    const m = /^#\s+(.+?)\s*#*\s*$/m.exec(content);
    const title = m ? m[1].replace(/[*_`]/g, "") : null;
    return { path, label: path, index, metadata: { title } };
  });
}

// --- the viewer instance --------------------------------------------------------------

class DocViewer {
  constructor(element, ctx) {
    this.element = element;
    this.ctx = ctx;
    this.t = translator(() => ctx.locale || "en");
    this.files = new Map();
    this.tabs = [];
    this.active = null;
    this.headings = [];
    this.scrollMemory = new Map();
    this.changedTabs = new Set();
    this.selectionText = null;
    this.selectionRange = null;
    this.lastSent = undefined;
    this.section = null;
    this.tocVisible = true;
    this.destroyed = false;
    this.md = null;
    this.waiters = [];
    this.setFiles(ctx.files || []);
    this.buildDom();
    this.stopLocale = ctx.onLocaleChange ? ctx.onLocaleChange(() => this.relabel()) : null;
    this.ready = this.init();
  }

  /** Text with {placeholders} filled by markup (escaped text, raw HTML params). */
  tHtml(key, html = {}) {
    return escapeHtml(this.t(key)).replace(/\{(\w+)\}/g, (whole, name) => (name in html ? html[name] : whole));
  }

  /** The fixed labels, in the current language. */
  applyLabels() {
    const t = this.t;
    this.tabBar.setAttribute("aria-label", t("tabs.label"));
    this.tocButton.title = t("toc.label");
    this.tocButton.querySelector("span").textContent = t("toc.button");
    this.toc.setAttribute("aria-label", t("toc.label"));
    this.tocTitle.textContent = t("toc.heading");
  }

  /**
   * The language changed: the fixed labels, then what the page shows in the
   * viewer's own words (an empty state, a notice, the headings' link labels),
   * without re-rendering the document or moving the reading position.
   */
  relabel() {
    if (this.destroyed) return;
    this.applyLabels();
    if (!this.md) {
      if (this.vendorError) this.showRendererMissing(this.vendorError);
      return;
    }
    const file = this.active ? this.files.get(this.active) : null;
    if (!this.active || (file && file.content == null)) {
      this.open(this.active);
      return;
    }
    const label = this.t("heading.anchor");
    for (const block of this.blocks(this.article)) {
      const anchors = block.querySelectorAll(".pd-anchor");
      if (!anchors.length) continue;
      for (const a of anchors) a.setAttribute("aria-label", label);
      block[RENDERED] = block.outerHTML; // the next in-place re-render compares with this
    }
    for (const a of this.article.querySelectorAll("a.pd-broken[data-path]")) {
      a.title = this.t("link.missing", { path: a.dataset.path });
    }
  }

  showRendererMissing(err) {
    const code = (text) => `<code>${escapeHtml(text)}</code>`;
    this.article.innerHTML =
      `<div class="pd-empty"><h2>${escapeHtml(this.t("renderer.missingTitle"))}</h2>` +
      `<p>${this.tHtml("renderer.missingBody", { install: code("scripts/install"),
        build: code("npm ci && npm run build"), folder: code("plugins/doc/web/") })}</p>` +
      `<p class="pd-muted">${escapeHtml(err?.message || err)}</p></div>`;
  }

  // -- setup --

  buildDom() {
    const root = document.createElement("div");
    root.className = "pd-root";
    // Labels are filled in by applyLabels(), in the person's language.
    root.innerHTML = `
      <div class="pd-bar">
        <div class="pd-tabs" role="tablist"></div>
        <button type="button" class="pd-toc-toggle" aria-pressed="true">
          <svg viewBox="0 0 16 16" width="16" height="16" aria-hidden="true"><path d="M2 3.5h12M2 8h8M2 12.5h10" stroke="currentColor" stroke-width="1.6" stroke-linecap="round" fill="none"/></svg>
          <span></span>
        </button>
      </div>
      <div class="pd-main">
        <nav class="pd-toc"><div class="pd-toc-title"></div><ol class="pd-toc-list"></ol></nav>
        <div class="pd-scroll" tabindex="-1">
          <article class="markdown-body pd-doc"></article>
        </div>
      </div>`;
    this.root = root;
    this.tabBar = root.querySelector(".pd-tabs");
    this.tocButton = root.querySelector(".pd-toc-toggle");
    this.toc = root.querySelector(".pd-toc");
    this.tocTitle = root.querySelector(".pd-toc-title");
    this.tocList = root.querySelector(".pd-toc-list");
    this.scroller = root.querySelector(".pd-scroll");
    this.article = root.querySelector(".pd-doc");
    this.applyLabels();
    this.element.appendChild(root);
    // A narrow panel starts with the contents hidden (they would cover the page).
    this.setToc(root.getBoundingClientRect().width >= 760 || root.getBoundingClientRect().width === 0);

    this.onScroll = () => {
      if (this.scrollFrame) return;
      this.scrollFrame = requestAnimationFrame(() => {
        this.scrollFrame = 0;
        this.trackSection();
      });
    };
    this.scroller.addEventListener("scroll", this.onScroll, { passive: true });
    this.onSelectionChange = () => {
      clearTimeout(this.selectionTimer);
      this.selectionTimer = setTimeout(() => this.trackSelection(), 120);
    };
    document.addEventListener("selectionchange", this.onSelectionChange);
    this.tocButton.addEventListener("click", () => this.setToc(!this.tocVisible));
    this.tabBar.addEventListener("click", (e) => {
      const tab = e.target.closest(".pd-tab");
      if (tab) this.open(tab.dataset.path);
    });
    this.tabBar.addEventListener("keydown", (e) => this.tabKeys(e));
    this.tocList.addEventListener("click", (e) => {
      const a = e.target.closest("a[data-slug]");
      if (!a) return;
      e.preventDefault();
      this.scrollToSlug(a.dataset.slug, { flash: true });
    });
    this.article.addEventListener("click", (e) => this.onArticleClick(e));
    this.installEditing();
  }

  async init() {
    await stylesheet.acquire();
    try {
      this.md = await loadRenderer();
    } catch (err) {
      this.vendorError = err;
      this.showRendererMissing(err);
      throw err;
    }
    if (this.destroyed) return;
    this.renderTabs();
    let start = null;
    try {
      start = sessionStorage.getItem("pneuma-doc:active");
    } catch {
      /* storage may be unavailable */
    }
    this.open(start && this.files.has(start) ? start : this.tabs[0] || null);
  }

  setFiles(list) {
    this.files = new Map();
    for (const f of list) if (f && f.path) this.files.set(f.path, f);
    this.tabs = sortTabs([...this.files.values()].filter((f) => !f.binary && isMarkdown(f.path)).map((f) => f.path));
    for (const waiter of [...this.waiters]) waiter();
  }

  // -- tabs --

  renderTabs() {
    const frag = document.createDocumentFragment();
    for (const path of this.tabs) {
      const tab = document.createElement("button");
      tab.type = "button";
      tab.className = "pd-tab";
      tab.setAttribute("role", "tab");
      tab.dataset.path = path;
      const selected = path === this.active;
      tab.setAttribute("aria-selected", String(selected));
      tab.tabIndex = selected ? 0 : -1;
      if (this.changedTabs.has(path)) tab.classList.add("pd-tab-changed");
      const dir = dirname(path);
      const name = path.slice(dir ? dir.length + 1 : 0);
      tab.innerHTML = (dir ? `<span class="pd-tab-dir">${escapeHtml(dir)}/</span>` : "") +
        `<span class="pd-tab-name">${escapeHtml(name)}</span>`;
      const title = resolveItems([this.files.get(path)])[0]?.metadata.title;
      tab.title = title ? `${title} — ${path}` : path;
      frag.appendChild(tab);
    }
    this.tabBar.replaceChildren(frag);
    this.tabBar.querySelector('[aria-selected="true"]')?.scrollIntoView({ block: "nearest", inline: "nearest" });
  }

  tabKeys(e) {
    if (!["ArrowLeft", "ArrowRight", "Home", "End"].includes(e.key)) return;
    const i = this.tabs.indexOf(this.active);
    let next = i;
    if (e.key === "ArrowLeft") next = Math.max(0, i - 1);
    if (e.key === "ArrowRight") next = Math.min(this.tabs.length - 1, i + 1);
    if (e.key === "Home") next = 0;
    if (e.key === "End") next = this.tabs.length - 1;
    if (next !== i && this.tabs[next]) {
      e.preventDefault();
      this.open(this.tabs[next]);
      this.tabBar.querySelector(".pd-tab[aria-selected=true]")?.focus();
    }
  }

  // -- rendering --

  renderHtml(path) {
    const file = this.files.get(path);
    const env = { file: path, contentUrl: (p) => this.ctx.contentUrl(p), anchorLabel: this.t("heading.anchor") };
    if (file && file.content == null) {
      // The server sends no text for files too large to stream live.
      const html = `<div class="pd-empty"><h2>${escapeHtml(this.t("file.tooLarge", { path }))}</h2>` +
        `<p><a href="${escapeAttr(this.ctx.contentUrl(path))}" target="_blank" rel="noopener">` +
        `${escapeHtml(this.t("file.openRaw"))}</a></p></div>`;
      return { html, headings: [] };
    }
    const html = this.md.render(file?.content || "", env);
    return { html, headings: env.headings || [] };
  }

  open(path, { keepScroll = true } = {}) {
    if (!this.md) return;
    if (this.active && this.active !== path) this.scrollMemory.set(this.active, this.scroller.scrollTop);
    this.active = path || null;
    this.changedTabs.delete(path);
    this.clearSelection();
    if (!path) {
      this.headings = [];
      this.article.innerHTML = `<div class="pd-empty"><h2>${escapeHtml(this.t("empty.title"))}</h2>` +
        `<p>${this.tHtml("empty.body", { ext: "<code>.md</code>" })}</p></div>`;
      this.renderToc();
      this.renderTabs();
      this.publish();
      return;
    }
    const { html, headings } = this.renderHtml(path);
    this.article.innerHTML = html;
    this.blocks(this.article);
    this.headings = headings;
    this.renderTabs();
    this.renderToc();
    this.scroller.scrollTop = keepScroll ? this.scrollMemory.get(path) || 0 : 0;
    try {
      sessionStorage.setItem("pneuma-doc:active", path);
    } catch {
      /* ignore */
    }
    this.ctx.setActiveFile?.(path);
    this.trackSection(true);
    this.drawPins();
  }

  // Re-render the open file in place: unchanged top-level blocks keep their
  // DOM nodes (and loaded images, and the person's selection); the changed
  // run is replaced; the reading position is kept.
  rerender({ highlight = false } = {}) {
    const { html, headings } = this.renderHtml(this.active);
    const tpl = document.createElement("template");
    tpl.innerHTML = html;
    const fresh = this.blocks(tpl.content);
    const old = this.blocks(this.article);
    // Keys are the HTML as rendered, not as it is now (a flashed heading
    // carries a class for a moment).
    const key = (n) => n[RENDERED];
    let pre = 0;
    while (pre < old.length && pre < fresh.length && key(old[pre]) === key(fresh[pre])) pre++;
    let suf = 0;
    while (suf < old.length - pre && suf < fresh.length - pre &&
           key(old[old.length - 1 - suf]) === key(fresh[fresh.length - 1 - suf])) suf++;

    // The reading position: the first block at the top of the viewport. Only
    // a block in the unchanged tail needs holding in place: the head does not
    // move, and a changed block starts where the unchanged head ends.
    const top = this.scroller.getBoundingClientRect().top;
    let anchor = null;
    let anchorOffset = 0;
    for (let i = 0; i < old.length; i++) {
      const el = old[i];
      const r = el.getBoundingClientRect();
      if (r.bottom > top) {
        if (i >= old.length - suf) {
          anchor = el;
          anchorOffset = r.top - top;
        }
        break;
      }
    }

    const scrollBefore = this.scroller.scrollTop;
    const removed = old.slice(pre, old.length - suf);
    const added = fresh.slice(pre, fresh.length - suf);
    const before = old[old.length - suf] || null;
    for (const n of removed) n.remove();
    for (const n of added) this.article.insertBefore(n, before);
    if (highlight) {
      for (const n of added) {
        n.classList.add("pd-changed");
        setTimeout(() => n.classList.remove("pd-changed"), 1600);
      }
    }
    this.headings = headings;
    this.renderToc();
    if (anchor && anchor.isConnected) {
      const delta = anchor.getBoundingClientRect().top - top - anchorOffset;
      if (Math.abs(delta) >= 1) this.scroller.scrollTop += delta;
    } else {
      this.scroller.scrollTop = scrollBefore;
    }
    if (this.selectionRange && !this.article.contains(this.selectionRange.startContainer)) this.clearSelection();
    this.trackSection(true);
    this.lastPatch = { head: pre, tail: suf, removed: removed.length, added: added.length, held: !!anchor };
    this.drawPins();
    return this.lastPatch;
  }

  // The top-level blocks of a rendered page, each remembering its HTML.
  blocks(parent) {
    const list = [];
    for (const n of [...parent.childNodes]) {
      if (n.nodeType !== 1) {
        n.remove(); // whitespace between blocks
        continue;
      }
      n[RENDERED] ??= n.outerHTML;
      list.push(n);
    }
    return list;
  }

  renderToc() {
    const items = this.headings.filter((h) => TOC_LEVELS.includes(h.level));
    const frag = document.createDocumentFragment();
    for (const h of items) {
      const li = document.createElement("li");
      li.className = `pd-toc-l${h.level}`;
      const a = document.createElement("a");
      a.href = `#${h.slug}`;
      a.dataset.slug = h.slug;
      a.textContent = h.text;
      li.appendChild(a);
      frag.appendChild(li);
    }
    this.tocList.replaceChildren(frag);
    this.toc.classList.toggle("pd-toc-empty", items.length === 0);
    this.highlightToc();
  }

  setToc(visible) {
    this.tocVisible = !!visible;
    this.root.classList.toggle("pd-toc-hidden", !this.tocVisible);
    this.tocButton.setAttribute("aria-pressed", String(this.tocVisible));
  }

  // -- position and selection --

  headingElements() {
    return [...this.article.querySelectorAll("h1[data-slug],h2[data-slug],h3[data-slug],h4[data-slug],h5[data-slug],h6[data-slug]")];
  }

  // The section at the top of the screen: the last heading at or above the
  // top edge (a little below it, so a heading just scrolled to counts). At the
  // end of the page, where the last headings cannot reach the top, the upper
  // half of the screen counts.
  visibleHeading() {
    const box = this.scroller.getBoundingClientRect();
    const atEnd = this.scroller.scrollTop > 0 &&
      this.scroller.scrollTop + this.scroller.clientHeight >= this.scroller.scrollHeight - 2;
    const limit = box.top + (atEnd ? this.scroller.clientHeight / 2 : 48);
    let found = null;
    for (const h of this.headingElements()) {
      if (h.getBoundingClientRect().top <= limit) found = h;
      else break;
    }
    return found;
  }

  trackSection(force = false) {
    const h = this.visibleHeading();
    const slug = h ? h.dataset.slug : null;
    if (!force && slug === this.section?.slug) return;
    const info = h ? this.headings.find((x) => x.slug === slug) : null;
    this.section = info ? { slug, text: info.text, level: info.level } : null;
    this.highlightToc();
    this.publish();
  }

  highlightToc() {
    const slug = this.section?.slug;
    let current = null;
    for (const a of this.tocList.querySelectorAll("a")) {
      const on = a.dataset.slug === slug;
      a.classList.toggle("pd-toc-current", on);
      if (on) current = a;
    }
    // The TOC may hold an h5 or h1 section: fall back to the nearest earlier entry.
    if (!current && slug) {
      const idx = this.headings.findIndex((x) => x.slug === slug);
      for (let i = idx; i >= 0; i--) {
        const h = this.headings[i];
        if (!TOC_LEVELS.includes(h.level)) continue;
        const a = this.tocList.querySelector(`a[data-slug="${CSS.escape(h.slug)}"]`);
        if (a) {
          a.classList.add("pd-toc-current");
          current = a;
        }
        break;
      }
    }
    if (current && this.tocVisible) {
      const list = this.toc;
      const r = current.getBoundingClientRect();
      const b = list.getBoundingClientRect();
      if (r.top < b.top || r.bottom > b.bottom) current.scrollIntoView({ block: "nearest" });
    }
  }

  trackSelection() {
    if (this.editing) return; // the text being edited is not a selection
    const sel = document.getSelection();
    if (!sel || sel.rangeCount === 0) return;
    const range = sel.getRangeAt(0);
    const inArticle = this.article.contains(range.commonAncestorContainer);
    if (sel.isCollapsed || !inArticle) {
      // A click inside the document drops the selection; focus moving to the
      // chat (or anywhere outside the viewer) keeps it for the next message.
      if (this.root.contains(range.commonAncestorContainer) && sel.isCollapsed && this.selectionText) {
        this.clearSelection();
        this.publish();
      }
      return;
    }
    const text = sel.toString().replace(/\u00a0/g, " ").trim();
    if (!text) return;
    this.selectionText = text;
    this.selectionRange = range.cloneRange();
    this.paintSelection();
    // The section of the selection is where it starts, not the screen's top.
    const startEl = range.startContainer.nodeType === 1 ? range.startContainer : range.startContainer.parentElement;
    const h = this.headingBefore(startEl);
    if (h) {
      const info = this.headings.find((x) => x.slug === h.dataset.slug);
      this.selectionSection = info ? { slug: info.slug, text: info.text, level: info.level } : null;
    } else this.selectionSection = null;
    this.publish();
  }

  headingBefore(el) {
    let found = null;
    for (const h of this.headingElements()) {
      if (h === el || h.contains(el)) return h;
      const pos = h.compareDocumentPosition(el);
      if (pos & Node.DOCUMENT_POSITION_FOLLOWING) found = h;
      else break;
    }
    return found;
  }

  paintSelection() {
    if (!globalThis.CSS?.highlights || typeof Highlight === "undefined") return;
    if (this.selectionRange) CSS.highlights.set("pneuma-doc-selection", new Highlight(this.selectionRange));
    else CSS.highlights.delete("pneuma-doc-selection");
  }

  clearSelection() {
    this.selectionText = null;
    this.selectionRange = null;
    this.selectionSection = null;
    this.paintSelection();
  }

  currentSelection() {
    if (!this.active) return null;
    const section = this.selectionText ? this.selectionSection : this.section;
    const sel = {
      file: this.active,
      section: section ? section.text : null,
      slug: section ? section.slug : null,
      text: this.selectionText || null,
    };
    // Only where the person is reading, nothing picked: a chip, never a pin.
    if (!sel.text) Object.assign(sel, { ambient: true, auto: true });
    const where = sel.section ? `${sel.file} › ${sel.section}` : sel.file;
    const quote = sel.text ? ` · “${sel.text.length > 40 ? sel.text.slice(0, 39) + "…" : sel.text}”` : "";
    sel.label = where + quote;
    return sel;
  }

  // The shell dropped the selection (its chip's ✕): forget the selected text
  // and stay quiet until the person looks at something else.
  dismiss() {
    document.getSelection()?.removeAllRanges();
    this.clearSelection();
    this.lastSent = JSON.stringify(this.currentSelection());
  }

  publish() {
    const sel = this.currentSelection();
    const key = JSON.stringify(sel);
    if (key === this.lastSent) return;
    this.lastSent = key;
    this.ctx.setSelection?.(sel);
  }

  // -- navigation --

  findHeading(query) {
    return findHeading(this.headings, query);
  }

  scrollToSlug(slug, { flash = false } = {}) {
    const el = this.article.querySelector(`[data-slug="${CSS.escape(slug)}"]`);
    if (!el) return false;
    const top = el.getBoundingClientRect().top - this.scroller.getBoundingClientRect().top;
    this.scroller.scrollTop += top - 12;
    if (flash) {
      el.classList.remove("pd-flash");
      void el.offsetWidth;
      el.classList.add("pd-flash");
      setTimeout(() => el.classList.remove("pd-flash"), 1800);
    }
    this.trackSection(true);
    return true;
  }

  onArticleClick(e) {
    const a = e.target.closest("a");
    if (!a || !this.article.contains(a)) return;
    if (a.classList.contains("pd-anchor")) {
      e.preventDefault();
      this.scrollToSlug(a.getAttribute("href").slice(1), { flash: true });
      return;
    }
    if (!a.hasAttribute("data-path")) return; // external: opens in a new tab
    e.preventDefault();
    const path = a.dataset.path;
    const fragment = a.dataset.fragment ?? null;
    if (!path || path === this.active) {
      if (fragment) this.gotoHeading(fragment, true);
      else this.scroller.scrollTop = 0;
      return;
    }
    if (this.tabs.includes(path)) {
      this.open(path, { keepScroll: !fragment });
      if (fragment) this.gotoHeading(fragment, true);
      else this.scroller.scrollTop = 0;
    } else if (this.files.has(path) || IMAGE_EXT.test(path)) {
      window.open(this.ctx.contentUrl(path), "_blank", "noopener");
    } else {
      a.classList.add("pd-broken");
      a.title = this.t("link.missing", { path });
    }
  }

  gotoHeading(query, flash) {
    const h = this.findHeading(query);
    if (h) this.scrollToSlug(h.slug, { flash });
    return h;
  }

  waitForFile(path, ms) {
    if (this.files.has(path)) return Promise.resolve(true);
    return new Promise((resolve) => {
      const check = () => {
        if (this.files.has(path)) finish(true);
      };
      const finish = (ok) => {
        clearTimeout(timer);
        this.waiters = this.waiters.filter((w) => w !== check);
        resolve(ok);
      };
      const timer = setTimeout(() => finish(false), ms);
      this.waiters.push(check);
    });
  }

  async navigateTo(params) {
    const raw = params?.file;
    if (typeof raw !== "string" || !raw.trim()) {
      return { success: false, message: "navigate-to needs 'file', a Markdown file relative to the workspace" };
    }
    const file = normalizePath(raw.trim().replace(/^\.\//, ""));
    if (!file || !isMarkdown(file)) {
      return { success: false, message: `${raw} is not a Markdown file this viewer shows; open tabs: ${this.tabs.join(", ") || "none"}` };
    }
    if (!this.files.has(file)) await this.waitForFile(file, NAV_WAIT_MS);
    if (!this.files.has(file)) {
      return { success: false, message: `No file ${file} in the workspace; open tabs: ${this.tabs.join(", ") || "none"}` };
    }
    const heading = params.heading;
    const hasHeading = typeof heading === "string" && heading.trim() !== "";
    if (file !== this.active) this.open(file, { keepScroll: false });
    if (!hasHeading) {
      this.scroller.scrollTop = 0;
      this.trackSection(true);
      return { success: true, message: `Showing ${file} from the top`, data: { file, heading: null, slug: null } };
    }
    const h = this.gotoHeading(heading, true);
    if (!h) {
      this.scroller.scrollTop = 0;
      this.trackSection(true);
      const known = this.headings.map((x) => `${x.text} (${x.slug})`).join("; ");
      return {
        success: false,
        message: `No heading "${heading}" in ${file}; showing the file from the top. Its headings: ${known || "none"}`,
        data: { file, heading: null, slug: null, headings: this.headings.map((x) => x.slug) },
      };
    }
    return { success: true, message: `Showing ${file} › ${h.text}`, data: { file, heading: h.text, slug: h.slug } };
  }

  describe() {
    const sel = this.currentSelection();
    const data = {
      file: this.active,
      section: this.section ? this.section.text : null,
      slug: this.section ? this.section.slug : null,
      selection: this.selectionText || null,
      tabs: [...this.tabs],
      tocVisible: this.tocVisible,
    };
    if (this.selectionText && sel?.section !== data.section) data.selectionSection = sel.section;
    let message;
    if (!this.active) message = "No Markdown files are open: the workspace has none.";
    else {
      message = `${this.active}, ` + (data.section ? `section "${data.section}"` : "top of the file");
      message += data.selection ? `; selected: "${data.selection.slice(0, 120)}${data.selection.length > 120 ? "…" : ""}"` : "; nothing selected";
      message += `. ${this.tabs.length} tab(s).`;
    }
    return { success: true, message, data };
  }

  // -- the contract --

  update(files, changes) {
    const before = new Set(this.tabs);
    this.setFiles(files || [...this.files.values()]);
    if (!this.md) return;
    const changed = changes || [];
    let rerenderActive = false;
    let external = false;
    for (const c of changed) {
      if (c.path === this.active) {
        rerenderActive = true;
        if (c.origin !== "self") external = true;
      } else if (isMarkdown(c.path) && !c.deleted && before.has(c.path)) {
        this.changedTabs.add(c.path);
      } else if (!isMarkdown(c.path) && this.article.querySelector(`img[data-path="${CSS.escape(c.path)}"]`)) {
        rerenderActive = true; // an image on the page changed: reload it
      }
    }
    for (const path of [...this.changedTabs]) if (!this.files.has(path)) this.changedTabs.delete(path);
    if (this.active && !this.files.has(this.active)) {
      this.scrollMemory.delete(this.active);
      const i = sortTabs([...before]).indexOf(this.active);
      this.open(this.tabs[Math.min(Math.max(i, 0), this.tabs.length - 1)] || null);
      return;
    }
    if (!this.active && this.tabs.length) {
      this.open(this.tabs[0]);
      return;
    }
    // Under an in-place edit the block stays as the person is typing it; what
    // changed is shown when the edit ends (a conflict if it was that file).
    if (rerenderActive && this.active && this.editing) this.editing.deferred = true;
    else if (rerenderActive && this.active) this.rerender({ highlight: external });
    this.renderTabs();
  }

  async runAction(actionId, params = {}) {
    await this.ready;
    switch (actionId) {
      case "navigate-to":
        return this.navigateTo(params || {});
      case "describe-view":
        return this.describe();
      case "ui:toggle-toc": {
        const visible = typeof params?.visible === "boolean" ? params.visible : !this.tocVisible;
        this.setToc(visible);
        return { success: true, message: visible ? "Table of contents shown" : "Table of contents hidden", data: { visible } };
      }
      default:
        return { success: false, message: `${actionId} is not supported by the doc viewer` };
    }
  }

  destroy() {
    this.destroyed = true;
    cancelAnimationFrame(this.scrollFrame);
    clearTimeout(this.selectionTimer);
    document.removeEventListener("selectionchange", this.onSelectionChange);
    if (this.stopLocale) this.stopLocale();
    if (globalThis.CSS?.highlights) CSS.highlights.delete("pneuma-doc-selection");
    this.root.remove();
    stylesheet.release();
  }
}

export default {
  mount(element, ctx) {
    const viewer = new DocViewer(element, ctx);
    viewer.ready.catch((err) => console.error("[pneuma-doc]", err));
    return {
      update: (files, changes) => viewer.update(files, changes),
      runAction: (actionId, params) => viewer.runAction(actionId, params),
      // Optional, for the shell: the person removed the selection chip.
      clearSelection: () => viewer.dismiss(),
      // Annotate and follow the agent (docs/viewer-contract.md): doc-pins.js.
      showPins: (pins) => viewer.showPins(pins),
      capturePin: (pin) => viewer.capturePin(pin),
      pinPlace: (selection, files) => viewer.pinPlace(selection, files),
      revealPin: (pin) => viewer.revealPin(pin),
      reveal: (path) => viewer.reveal(path),
      problems: () => viewer.problems(),
      destroy: () => viewer.destroy(),
      // For tests and the shell's diagnostics.
      get viewer() {
        return viewer;
      },
    };
  },
  extractContext,
  resolveItems,
  capabilities: ["annotate", "edit", "follow"],
};

Object.assign(DocViewer.prototype, editingInPlace, docPins);

export { extractContext, githubSlug, resolveItems };
