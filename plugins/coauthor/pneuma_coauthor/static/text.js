// The coauthor viewer's text to HTML: escaping, a LaTeX source line with its
// commands coloured, and the Markdown of OUTLINE.md, BRIEF.md and STYLE.md
// through the shell's one markdown-it (/static/lib/markdown-it.js), with each
// block's source line kept (data-line) so navigate-to can land on it.

import { MarkdownIt } from "/static/lib/markdown-it.js";

export function esc(s) {
  return String(s ?? "").replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");
}
export function attr(s) {
  return String(s ?? "").replace(/&/g, "&amp;").replace(/"/g, "&quot;").replace(/</g, "&lt;").replace(/\n/g, " ");
}

/** One source line with LaTeX commands, comments and inline math coloured. */
export function latexLine(line) {
  let code = line;
  let comment = "";
  for (let i = 0; i < line.length; i += 1) {
    if (line[i] === "\\") { i += 1; continue; }
    if (line[i] === "%") { code = line.slice(0, i); comment = line.slice(i); break; }
  }
  const parts = [];
  const re = /(\\[A-Za-z@]+\*?|\\.)|(\$[^$]*\$)/g;
  let last = 0;
  let m;
  while ((m = re.exec(code))) {
    parts.push(esc(code.slice(last, m.index)));
    parts.push(m[1] ? `<span class="ca-cmd">${esc(m[1])}</span>` : `<span class="ca-math">${esc(m[2])}</span>`);
    last = re.lastIndex;
  }
  parts.push(esc(code.slice(last)));
  if (comment) parts.push(`<span class="ca-cmt">${esc(comment)}</span>`);
  return parts.join("");
}

const md = new MarkdownIt({ html: false, linkify: false, typographer: false });

// Blocks carry the source line they start on (1-based).
md.core.ruler.push("coauthor_source_lines", (state) => {
  for (const token of state.tokens) {
    if (token.map && token.nesting >= 0 && token.block) token.attrSet("data-line", String(token.map[0] + 1));
  }
});

// `code` naming a paper file or a \label becomes a link into the viewer.
md.renderer.rules.code_inline = (tokens, idx) => {
  const code = tokens[idx].content;
  if (/^[\w./-]+\.(tex|bib|md)$/.test(code)) {
    return `<a class="ca-link ca-code-link" data-act="open-file" data-path="${attr(code)}"><code>${esc(code)}</code></a>`;
  }
  if (/^(sec|fig|tab|eq|app|alg|lst):[\w:.-]+$/.test(code)) {
    return `<a class="ca-link ca-code-link" data-act="open-label" data-label="${attr(code)}"><code>${esc(code)}</code></a>`;
  }
  return `<code>${esc(code)}</code>`;
};

// Links open beside the viewer, never in it.
const linkOpen = md.renderer.rules.link_open || ((tokens, idx, options, env, self) => self.renderToken(tokens, idx, options));
md.renderer.rules.link_open = (tokens, idx, options, env, self) => {
  tokens[idx].attrJoin("class", "ca-link");
  tokens[idx].attrSet("target", "_blank");
  tokens[idx].attrSet("rel", "noopener");
  return linkOpen(tokens, idx, options, env, self);
};

/** HTML of a Markdown file, each block with its source line. */
export function renderMarkdown(source) {
  return md.render(String(source || "").replace(/\r\n?/g, "\n"));
}

/** HTML of one line of inline Markdown (a plan's goal, a list entry). */
export function renderInline(text) {
  return md.renderInline(String(text ?? ""));
}

// --- the board's words: columns, statuses, times, line ranges -------------------

export const DONE_SHOWN = 30;
// Each column's label and hint are the catalogue's col.<id> and col.<id>.hint.
export const COLUMNS = [
  { id: "blocked", statuses: ["blocked"] },
  { id: "review", statuses: ["awaiting_review"] },
  { id: "working", statuses: ["in_progress", "claimed"] },
  { id: "open", statuses: ["open"] },
  { id: "done", statuses: ["done", "canceled"] },
];
// What the agent reads (action results) stays English.
export const STATUS_LABEL = {
  open: "open", claimed: "claimed", in_progress: "in progress", awaiting_review: "awaiting review",
  done: "done", blocked: "blocked", canceled: "canceled",
};
export const PLAN_PARTS = ["issues", "strategy", "scope", "risks"]; // catalogue: plan.<part>

export function baseName(path) {
  return String(path).split("/").pop();
}
export function lineLabel(t, a, b) {
  return a === b ? t("lines.one", { line: a }) : t("lines.range", { start: a, end: b });
}
export function refLabel(ref) {
  if (!ref.range) return ref.path;
  const { lineStart: a, lineEnd: b } = ref.range;
  return `${ref.path}:${a === b ? a : `${a}–${b}`}`;
}
export function ago(t, iso) {
  const when = Date.parse(iso);
  if (!Number.isFinite(when)) return "";
  const s = Math.max(0, (Date.now() - when) / 1000);
  if (s < 50) return t("time.now");
  if (s < 3600) return t("time.minutes", { count: Math.round(s / 60) });
  if (s < 86400) return t("time.hours", { count: Math.round(s / 3600) });
  return new Date(when).toLocaleDateString(document.documentElement.lang || undefined);
}
export function clock(iso) {
  const t = Date.parse(iso);
  return Number.isFinite(t) ? new Date(t).toLocaleTimeString([], { hour: "2-digit", minute: "2-digit", second: "2-digit", hour12: false }) : "";
}

export function paperFiles(files) {
  const rank = (p) => (p === "OUTLINE.md" ? 0 : p === "BRIEF.md" ? 1 : p === "STYLE.md" ? 2 : p === "main.tex" ? 3 : 4);
  return (files || [])
    .filter((f) => !f.binary && /\.(tex|bib|md)$/i.test(f.path) && !f.path.startsWith(".pneuma/"))
    .sort((x, y) => rank(x.path) - rank(y.path) || x.path.localeCompare(y.path));
}
