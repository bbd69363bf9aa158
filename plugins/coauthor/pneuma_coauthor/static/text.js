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
