// A page's text in its HTML source: where each run of text between tags
// sits (byte offsets into the string, from the shell's source-edit.js) and
// which run an edit the person made in the rendered page belongs to, so it
// is written back into exactly those bytes (docs/viewer-contract.md, "Edit
// in place").
//
// The bridge names an edited text node by its text before the edit and by
// which of the document's text nodes with that same text it was (index of
// total). The source has the same runs in the same order, unless the page's
// scripts made or changed text: then the counts differ and the edit is
// refused rather than written to the wrong place.

import { escapeHtmlText, htmlTextNodes } from "/static/lib/source-edit.js";

// Elements whose text the bridge never offers for editing (not shown as the
// page's text, or not in the document): left out here too, so the counts agree.
const NOT_TEXT = new Set(["title", "textarea", "noscript", "template", "xmp", "iframe", "noembed", "noframes"]);

/** The page's text runs as the bridge counts them: [{start, end, raw, text}]. */
export function textRuns(html) {
  return htmlTextNodes(html).filter((node) => !node.parents.some((name) => NOT_TEXT.has(name)));
}

/** The source of one run after its text became `after`: when the source
 * spells the text as it reads (no character references), only the part
 * between the common start and end changes; otherwise the run is written
 * again, escaped. */
function respell(run, after) {
  if (run.raw !== run.text) return escapeHtmlText(after);
  let head = 0;
  while (head < run.text.length && head < after.length && run.text[head] === after[head]) head++;
  let tail = 0;
  while (tail < run.text.length - head && tail < after.length - head
    && run.text[run.text.length - 1 - tail] === after[after.length - 1 - tail]) tail++;
  return run.raw.slice(0, head) + escapeHtmlText(after.slice(head, after.length - tail)) + run.raw.slice(run.raw.length - tail);
}

/** `html` with each change applied: {before, after, index, total} names the
 * index-th of the `total` text runs that read `before`. Resolves to
 * {content} or {refused: "script"} when the source does not hold that text
 * as the page shows it (the page's scripts made or changed it). */
export function replaceTexts(html, changes) {
  const runs = textRuns(html);
  const edits = [];
  for (const change of changes) {
    const same = runs.filter((run) => run.text === change.before);
    const run = same[change.index];
    if (same.length !== change.total || !run) return { refused: "script" };
    // Chromium keeps typed spaces visible as no-break spaces; the person meant spaces.
    const after = change.before.includes("\u00a0") ? change.after : change.after.replace(/\u00a0/g, " ");
    edits.push({ run, text: respell(run, after) });
  }
  edits.sort((a, b) => b.run.start - a.run.start);
  let content = html;
  for (const { run, text } of edits) content = content.slice(0, run.start) + text + content.slice(run.end);
  return { content };
}
