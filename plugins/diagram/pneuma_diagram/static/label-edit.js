// A diagram label edited where it is drawn, written back into the .mmd
// source (viewer contract, "Edit in place"): only the label's characters on
// its source line change; the rest of the file stays byte for byte.
//
// source-map.js tells which line says a node or an edge and what its label
// reads (plain text). The label is found on that line between the
// delimiters the diagram types write labels in: a node's shape brackets
// (A[…], A(…), A{…}, A>…], A((…))), an edge's pipes (-->|…|) or its text
// (-- … -->), the text after a colon (A->>B: …, Duck : +swim()) and a
// participant's alias (participant S as …), with or without double
// quotes. What cannot be found there exactly once is refused with a reason
// rather than guessed.

import { escapeRe } from "./source-text.js";

const OPENERS = "[({>|:/\\";
const CLOSERS = { "[": "])", "(": ")]", "{": "})", ">": "]", "|": "|", ":": "", "/": "/\\", "\\": "\\/" };
// characters that end or confuse an unquoted label (mermaid's flowchart lexer)
const NEEDS_QUOTES = /[[\](){}|"<>;#]|^\s|\s$/;

// The refusals, each the catalogue key (static/i18n.js) of what the person reads.
const REFUSED = {
  empty: "edit.empty", multiline: "edit.multiline", unmapped: "edit.unmapped",
  ambiguous: "edit.ambiguous", quote: "edit.quote",
};

function refusal(reason) {
  return { error: REFUSED[reason] };
}

/** Where `label` stands as a label on `row`: [{start, end, quoted, opener}]. */
function labelSpans(row, label) {
  const spans = [];
  if (!label) return spans;
  for (let at = row.indexOf(label); at !== -1; at = row.indexOf(label, at + 1)) {
    const end = at + label.length;
    const quoted = row[at - 1] === '"' && row[end] === '"';
    const before = row.slice(0, quoted ? at - 1 : at).trimEnd();
    const after = row.slice(quoted ? end + 1 : end).trimStart();
    const opener = before.slice(-1);
    if (!OPENERS.includes(opener) || !opener) continue;
    const closers = CLOSERS[opener];
    // a colon's text runs to the end of the line; an edge's "-- text -->" is
    // the one unbracketed form (its opener is the dash pair, checked below)
    if (closers && !(after.length && closers.includes(after[0]))) continue;
    if (!closers && after.length) continue;
    spans.push({ start: quoted ? at - 1 : at, end: quoted ? end + 1 : end, quoted, opener, before });
  }
  // "participant S as Some name": an alias runs to the end of the line
  const alias = new RegExp(`^(.*\\sas\\s+)("?)${escapeRe(label)}\\2\\s*$`).exec(row);
  if (alias && /^\s*(?:create\s+)?(?:participant|actor)\s/.test(row)) {
    const start = alias[1].length;
    spans.push({ start, end: start + label.length + 2 * alias[2].length, quoted: Boolean(alias[2]), opener: ":", before: alias[1] });
  }
  // "A -- text --> B": the label between two dashes and an arrow
  const dashed = new RegExp(`(--|==|-\\.)\\s*("?)${escapeRe(label)}\\2\\s*(-->|==>|\\.->|---|===)`, "g");
  for (const m of row.matchAll(dashed)) {
    const start = m.index + m[0].indexOf(label) - m[2].length;
    spans.push({ start, end: start + label.length + 2 * m[2].length, quoted: Boolean(m[2]), opener: "-", before: row.slice(0, start) });
  }
  return spans;
}

/** The span of the label of `id` (a node's shape follows its id). */
function spanOf(spans, id) {
  if (spans.length <= 1 || !id) return spans.length === 1 ? spans[0] : null;
  const own = new RegExp(`(?:^|[^\\p{L}\\p{N}_])${escapeRe(id)}\\s*[[({>]*$`, "u");
  const mine = spans.filter((s) => own.test(s.before));
  return mine.length === 1 ? mine[0] : null;
}

/** The label text as the source must write it there. */
function written(text, span) {
  if (span.opener === ":") return { text: text.replace(/;/g, "#59;") };
  if (span.quoted) return { text: `"${text.replace(/"/g, "#quot;")}"` };
  if (NEEDS_QUOTES.test(text)) return { text: `"${text.replace(/"/g, "#quot;")}"` };
  return { text };
}

/**
 * The source with the label `oldLabel` of `target` ({line, id}) replaced by
 * `newLabel`: {content} or {error: the catalogue key of the refusal}. `oldLabel` is what the
 * person saw (source-map.js's data-src-label).
 */
export function replaceLabel(source, target, oldLabel, newLabel) {
  const text = String(newLabel ?? "").trim();
  if (!text) return refusal("empty");
  if (/[\r\n]/.test(text)) return refusal("multiline");
  const lineNo = Number(target.line);
  if (!lineNo || !oldLabel) return refusal("unmapped");
  // keep every line ending as it is: split on \n only, a \r stays on its line
  const lines = String(source).split("\n");
  const raw = lines[lineNo - 1];
  if (raw == null) return refusal("unmapped");
  const body = raw.endsWith("\r") ? raw.slice(0, -1) : raw;
  const spans = labelSpans(body, oldLabel);
  if (!spans.length) return refusal("unmapped");
  const span = spanOf(spans, target.id);
  if (!span) return refusal("ambiguous");
  if (span.opener === ":" && text.includes('"') && span.quoted) return refusal("quote");
  const replacement = written(text, span).text;
  const keepQuotes = span.opener === ":" && span.quoted;
  const inner = keepQuotes ? `"${replacement}"` : replacement;
  const edited = body.slice(0, span.start) + inner + body.slice(span.end) + raw.slice(body.length);
  if (edited === raw) return { content: String(source) };
  lines[lineNo - 1] = edited;
  return { content: lines.join("\n") };
}
