// The doc viewer's <viewer-context>: which file and section the person was
// reading, the text they selected and, when known, its source lines
// (docs/viewer-contract.md, "Selection → viewer context").

const MODE = "doc";
const MAX_SELECTION_CHARS = 2000;

function attr(s) {
  return String(s).replace(/&/g, "&amp;").replace(/"/g, "&quot;").replace(/</g, "&lt;").replace(/\n/g, " ");
}

function quoteText(text) {
  let t = String(text).replace(/\r\n?/g, "\n").trim();
  let cut = false;
  if (t.length > MAX_SELECTION_CHARS) {
    t = t.slice(0, MAX_SELECTION_CHARS);
    cut = true;
  }
  const lines = t.split("\n").map((line) => (line.trim() ? "> " + line.trimEnd() : ">"));
  // Collapse runs of empty quote lines.
  const out = lines.filter((line, i) => !(line === ">" && lines[i - 1] === ">"));
  if (cut) out.push("> […]");
  // Never let the selection close the element early.
  return out.join("\n").replace(/<\/viewer-context/gi, "&lt;/viewer-context");
}

export function extractContext(selection, files) {
  if (!selection || !selection.file) return "";
  let open = `<viewer-context mode="${MODE}" file="${attr(selection.file)}"`;
  if (selection.section) open += ` section="${attr(selection.section)}"`;
  if (selection.lines) open += ` lines="${attr(selection.lines)}"`;
  open += ">";
  const body = selection.text ? `\nSelected text:\n${quoteText(selection.text)}\n` : "\n";
  return `${open}${body}</viewer-context>`;
}
