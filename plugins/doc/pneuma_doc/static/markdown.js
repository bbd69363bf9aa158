// The doc viewer's Markdown: which workspace files are documents, how links
// between them resolve, GitHub's heading slugs, and the markdown-it renderer
// (the shell's one markdown-it, with task lists, heading anchors, links into
// the workspace and highlighted fences).

import { normalizePath } from "/static/lib/viewer-helpers.js";

const VENDOR_URL = new URL("./vendor/doc-vendor.js", import.meta.url).href;

const HIDDEN_PREFIXES = [".pneuma/", ".claude/", ".git/", "node_modules/"];

// --- paths --------------------------------------------------------------------

// The agent's instruction files never reach a viewer: the host leaves them
// out of every listing (pneuma.api.AGENT_INSTRUCTION_FILES, the one list).
export function isMarkdown(path) {
  if (!/\.md$/i.test(path)) return false;
  return !HIDDEN_PREFIXES.some((p) => path.startsWith(p) || path.includes("/" + p));
}


export function dirname(path) {
  const i = path.lastIndexOf("/");
  return i < 0 ? "" : path.slice(0, i);
}

function isExternal(url) {
  return /^[a-z][a-z0-9+.-]*:/i.test(url) || url.startsWith("//");
}

function safeDecode(s) {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}

// Resolve a relative link/image target against the folder of `fromFile`.
// Returns {path, fragment} (path "" for a same-file fragment) or null.
function resolveRelative(fromFile, url) {
  if (!url || isExternal(url)) return null;
  const hash = url.indexOf("#");
  const rawPath = hash < 0 ? url : url.slice(0, hash);
  const fragment = hash < 0 ? null : safeDecode(url.slice(hash + 1));
  const pathOnly = rawPath.split("?")[0];
  if (!pathOnly) return { path: "", fragment };
  const joined = pathOnly.startsWith("/")
    ? pathOnly
    : (dirname(fromFile) ? dirname(fromFile) + "/" : "") + pathOnly;
  const path = normalizePath(safeDecode(joined));
  if (path === null) return null;
  return { path, fragment };
}

export function sortTabs(paths) {
  const rank = (p) => (p.toLowerCase() === "readme.md" ? 0 : 1);
  return [...paths].sort((a, b) => rank(a) - rank(b) || a.localeCompare(b));
}

// --- slugs (GitHub's rules, as the skill describes them) -------------------------

export function githubSlug(text) {
  return String(text)
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, "")
    .replace(/ /g, "-");
}

function uniqueSlug(base, seen) {
  let slug = base;
  if (seen.has(slug)) {
    let n = seen.get(base);
    do {
      n += 1;
      slug = `${base}-${n}`;
    } while (seen.has(slug));
    seen.set(base, n);
  }
  if (!seen.has(slug)) seen.set(slug, 0);
  return slug;
}

function inlineText(tokens) {
  let text = "";
  for (const t of tokens || []) {
    if (t.type === "text" || t.type === "code_inline") text += t.content;
    else if (t.type === "softbreak" || t.type === "hardbreak") text += " ";
    else if (t.type === "image") text += inlineText(t.children);
    else if (t.children) text += inlineText(t.children);
  }
  return text;
}

/**
 * The heading a link's #fragment or navigate-to's `heading` names: its text,
 * its slug, either in other case, or the slug of the text. One rule for the
 * viewer and the export, so a link that works in one works in the other.
 */
export function findHeading(headings, query) {
  const q = String(query).trim().replace(/^#+\s*/, "").trim();
  if (!q) return null;
  const lower = q.toLowerCase();
  return (
    headings.find((h) => h.text === q) ||
    headings.find((h) => h.slug === q) ||
    headings.find((h) => h.text.toLowerCase() === lower) ||
    headings.find((h) => h.slug === lower) ||
    headings.find((h) => h.slug === githubSlug(q)) ||
    null
  );
}

// --- markdown-it setup ----------------------------------------------------------

export function escapeHtml(s) {
  return String(s)
    .replace(/&/g, "&amp;")
    .replace(/</g, "&lt;")
    .replace(/>/g, "&gt;")
    .replace(/"/g, "&quot;");
}

export function escapeAttr(s) {
  return String(s).replace(/&/g, "&amp;").replace(/"/g, "&quot;").replace(/</g, "&lt;");
}

// Task lists: "- [ ] text" / "- [x] text" in bullet lists become checkboxes.
function taskListPlugin(md) {
  md.core.ruler.after("inline", "pneuma_task_lists", (state) => {
    const tokens = state.tokens;
    for (let i = 2; i < tokens.length; i++) {
      const inline = tokens[i];
      if (inline.type !== "inline") continue;
      if (tokens[i - 1].type !== "paragraph_open" || tokens[i - 2].type !== "list_item_open") continue;
      const m = /^\[([ xX])\](?=\s|$)/.exec(inline.content);
      if (!m) continue;
      // Only bullet lists (the skill says task lists live in "- " lists).
      let level = tokens[i - 2].level;
      let listOpen = null;
      for (let j = i - 3; j >= 0; j--) {
        if (tokens[j].level === level - 1 && /_list_open$/.test(tokens[j].type)) {
          listOpen = tokens[j];
          break;
        }
      }
      if (!listOpen || listOpen.type !== "bullet_list_open") continue;
      const first = inline.children[0];
      if (!first || first.type !== "text" || !first.content.startsWith(m[0])) continue;
      first.content = first.content.slice(m[0].length).replace(/^\s/, "");
      const checked = m[1] !== " ";
      const box = new state.Token("html_inline", "", 0);
      // The box is named by its task's text (axe-core: a form element needs a label).
      box.content = `<input type="checkbox" class="task-list-item-checkbox" disabled${checked ? " checked" : ""}`
        + ` aria-label="${escapeAttr(first.content.trim())}"> `;
      inline.children.unshift(box);
      tokens[i - 2].attrJoin("class", "task-list-item");
      if (!/\bcontains-task-list\b/.test(listOpen.attrGet("class") || "")) {
        listOpen.attrJoin("class", "contains-task-list");
      }
    }
  });
}

// Headings get data-slug (GitHub slugs, -1/-2 for repeats) and an anchor link.
// env.headingId(slug), when given, is the heading's id in a page of several
// documents (the export): set on the heading and used by its anchor link.
function headingPlugin(md) {
  md.core.ruler.push("pneuma_heading_slugs", (state) => {
    const seen = new Map();
    const headings = [];
    const tokens = state.tokens;
    for (let i = 0; i < tokens.length; i++) {
      const t = tokens[i];
      if (t.type !== "heading_open") continue;
      const text = inlineText(tokens[i + 1].children).trim();
      const slug = uniqueSlug(githubSlug(text), seen);
      t.attrSet("data-slug", slug);
      t.meta = { ...(t.meta || {}), slug };
      headings.push({ level: Number(t.tag.slice(1)), text, slug });
    }
    state.env.headings = headings;
  });
  const openDefault = md.renderer.rules.heading_open ||
    ((tokens, idx, options, env, self) => self.renderToken(tokens, idx, options));
  md.renderer.rules.heading_open = (tokens, idx, options, env, self) => {
    const slug = tokens[idx].meta?.slug;
    const id = slug && env.headingId ? env.headingId(slug) : null;
    if (id) tokens[idx].attrSet("id", id);
    const html = openDefault(tokens, idx, options, env, self);
    if (!slug) return html;
    return html +
      `<a class="pd-anchor" href="#${escapeAttr(id || slug)}" aria-label="${escapeAttr(env.anchorLabel || "#")}" tabindex="-1">#</a>`;
  };
}

// Links and images: relative targets resolve against the file's folder.
// For the export, env.pageHref({path, fragment}) is where a link into the
// workspace points inside the one page (or null to keep it as written), and
// env.eagerImages loads images at once (a printed page scrolls to none).
function linkPlugin(md) {
  const imageDefault = md.renderer.rules.image;
  md.renderer.rules.image = (tokens, idx, options, env, self) => {
    const token = tokens[idx];
    const src = token.attrGet("src") || "";
    const target = resolveRelative(env.file || "", src);
    if (target && target.path && env.contentUrl) {
      token.attrSet("data-path", target.path);
      token.attrSet("src", env.contentUrl(target.path));
    }
    if (!env.eagerImages) token.attrSet("loading", "lazy");
    return imageDefault(tokens, idx, options, env, self);
  };
  const linkDefault = md.renderer.rules.link_open ||
    ((tokens, idx, options, env, self) => self.renderToken(tokens, idx, options));
  md.renderer.rules.link_open = (tokens, idx, options, env, self) => {
    const token = tokens[idx];
    const href = token.attrGet("href") || "";
    if (isExternal(href)) {
      if (!/^mailto:/i.test(href)) {
        token.attrSet("target", "_blank");
        token.attrSet("rel", "noopener noreferrer");
      }
    } else {
      const target = resolveRelative(env.file || "", href);
      if (target) {
        token.attrSet("data-path", target.path);
        if (target.fragment !== null) token.attrSet("data-fragment", target.fragment);
        const inPage = env.pageHref ? env.pageHref({ path: target.path || env.file || "", fragment: target.fragment }) : null;
        if (inPage) token.attrSet("href", inPage);
      }
    }
    return linkDefault(tokens, idx, options, env, self);
  };
}

/**
 * The doc renderer: markdown-it with the doc mode's one configuration. The
 * viewer and the export (export-render.js) both build theirs here, so a
 * document exports as the viewer shows it. `html: true` is only for the
 * export that keeps the documents' raw HTML (the person's explicit choice).
 */
export function createRenderer(vendor, { html = false } = {}) {
  const { MarkdownIt, hljs } = vendor;
  const md = new MarkdownIt({
    html, // by default raw HTML is shown as text, never interpreted
    linkify: true,
    typographer: false,
    highlight(code, lang) {
      const name = (lang || "").trim().split(/\s+/)[0].toLowerCase();
      if (name && hljs.getLanguage(name)) {
        try {
          return hljs.highlight(code, { language: name, ignoreIllegals: true }).value;
        } catch {
          /* fall through to plain text */
        }
      }
      return "";
    },
  });
  // Only links with a scheme (https://…) are autolinked: with fuzzy links on,
  // file names such as setup.py or README.md would become web addresses.
  md.linkify.set({ fuzzyLink: false, fuzzyEmail: false, fuzzyIP: false });
  md.use(taskListPlugin).use(headingPlugin).use(linkPlugin);
  // Fences: a class hljs on <code>, and the language shown in a corner.
  const fenceDefault = md.renderer.rules.fence;
  md.renderer.rules.fence = (tokens, idx, options, env, self) => {
    const token = tokens[idx];
    const lang = (token.info || "").trim().split(/\s+/)[0];
    const html = fenceDefault(tokens, idx, options, env, self);
    const label = lang ? `<span class="pd-code-lang">${escapeHtml(lang)}</span>` : "";
    return `<div class="pd-code">${label}${html.replace(/class="language-/, 'class="hljs language-')}</div>`;
  };
  // Tables scroll sideways instead of overflowing the page.
  md.renderer.rules.table_open = () => '<div class="pd-table-wrap"><table>\n';
  md.renderer.rules.table_close = () => "</table></div>\n";
  return md;
}

const MARKDOWN_IT_URL = "/static/lib/markdown-it.js";

let vendorPromise = null;
function loadVendor() {
  vendorPromise ??= Promise.all([import(MARKDOWN_IT_URL), import(VENDOR_URL)])
    .then(([{ MarkdownIt }, { hljs }]) => ({ MarkdownIt, hljs }));
  return vendorPromise;
}

/** The doc renderer, once its third-party code has loaded. */
export async function loadRenderer() {
  return createRenderer(await loadVendor());
}
