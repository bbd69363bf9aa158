// Where mermaid's line numbers are in the .mmd file: the rules of
// pneuma_diagram/source_lines.py (which says why), run in the viewer.
// mermaid counts lines after cutting front matter, %%{…}%% directives, %%
// comment lines and the blank lines at the top; these functions replay that
// on the file, each character keeping the file line it came from.
// tests/modes/test_diagram_error_lines.py holds this file and the Python one
// to the same cases.

// mermaid's directiveRegex and cleanupComments (src/diagram-api/), verbatim
const DIRECTIVE = /%{2}{\s*(?:(\w+)\s*:|(\w+))\s*(?:(\w+)|((?:(?!}%{2}).|\r?\n)*))?\s*(?:}%{2})?/gi;
const COMMENT_LINE = /^\s*%%(?!{)[^\n]+\n?/gm;
// the types that parse with their comments kept (preserveCommentsWhenParsing)
const KEEPS_COMMENTS = /^\s*(?:agentflow-beta\b|eventmodeling)/;
const NO_TYPE = /No diagram type detected|UnknownDiagramError|Diagram \S+ not found/i;
const LINE_IN_MESSAGE = /(\berror on line )(\d+)/gi;
const SPACE = /\s/;

const isBreak = (c) => c === "\n" || c === "\r";

/** Text with the 0-based file line of each character. */
function traced(text, origin) {
  return { text, origin };
}

function without(t, spans) {
  let text = "";
  const origin = [];
  let at = 0;
  for (const [start, end] of spans) {
    text += t.text.slice(at, start);
    origin.push(...t.origin.slice(at, start));
    at = end;
  }
  text += t.text.slice(at);
  origin.push(...t.origin.slice(at));
  return traced(text, origin);
}

function withoutMatches(t, pattern) {
  const spans = [...t.text.matchAll(pattern)].filter((m) => m[0].length)
    .map((m) => [m.index, m.index + m[0].length]);
  return without(t, spans);
}

/** CR LF and lone CR as LF (mermaid's cleanupText); a file line is a line of this. */
function normalised(text) {
  let out = "";
  const origin = [];
  let line = 0;
  for (let i = 0; i < text.length; i++) {
    let c = text[i];
    if (c === "\r") {
      c = "\n";
      if (text[i + 1] === "\n") i++;
    }
    out += c;
    origin.push(line);
    if (c === "\n") line++;
  }
  return traced(out, origin);
}

function lastBreakInSpaceRun(text, start) {
  let found = -1;
  for (let i = start; i < text.length && SPACE.test(text[i]); i++) if (isBreak(text[i])) found = i;
  return found;
}

/** How many characters of `text` are front matter (mermaid's matchFrontMatter). */
export function frontMatterLength(text) {
  let cursor = 0;
  while (cursor < text.length && SPACE.test(text[cursor]) && !isBreak(text[cursor])) cursor++;
  const indent = text.slice(0, cursor);
  if (!text.startsWith("---", cursor)) return 0;
  const openingEnds = [];
  for (let i = cursor + 3; i < text.length && SPACE.test(text[i]); i++) if (isBreak(text[i])) openingEnds.push(i);
  if (!openingEnds.length) return 0;
  const fence = indent + "---";
  const closingEnd = (at) => (isBreak(text[at]) && text.startsWith(fence, at + 1)
    ? lastBreakInSpaceRun(text, at + 1 + fence.length) : -1);
  let lastFence = -1;
  for (let at = openingEnds[0] + 1; at < text.length; at++) if (closingEnd(at) !== -1) lastFence = at;
  if (lastFence === -1) return 0;
  let openingEnd = openingEnds[0];
  for (const candidate of openingEnds) if (candidate < lastFence) openingEnd = candidate;
  for (let at = openingEnd + 1; at <= lastFence; at++) {
    const end = closingEnd(at);
    if (end !== -1) return end + 1;
  }
  return 0;
}

function trimmedStart(t) {
  let n = 0;
  while (n < t.text.length && SPACE.test(t.text[n])) n++;
  return without(t, [[0, n]]);
}

function firstCodeLine(text) {
  return text.split("\n").find((line) => line.split("%%")[0].trim()) ?? "";
}

/** The text mermaid's parser reads for `text`, traced to the file's lines. */
export function parsedText(text) {
  let t = normalised(String(text ?? ""));
  t = without(t, [[0, frontMatterLength(t.text)]]);
  const withComments = withoutMatches(t, DIRECTIVE);
  const cleaned = trimmedStart(withoutMatches(withComments, COMMENT_LINE));
  return KEEPS_COMMENTS.test(firstCodeLine(cleaned.text)) ? withComments : cleaned;
}

function fileLineCount(text) {
  const lines = normalised(String(text ?? "")).text.split("\n");
  if (lines.length > 1 && lines[lines.length - 1] === "") lines.pop();
  return lines.length;
}

/** The 1-based file line mermaid calls `line` in its errors (null stays null). */
export function fileLine(text, line) {
  if (line == null || line < 1) return line;
  const parsed = parsedText(text);
  const starts = [0];
  for (let i = 0; i < parsed.text.length; i++) if (parsed.text[i] === "\n") starts.push(i + 1);
  const last = fileLineCount(text);
  if (line <= starts.length) {
    const start = starts[line - 1];
    if (start < parsed.origin.length) return Math.min(parsed.origin[start] + 1, last);
  }
  return last; // past the end ("got EOF"): the last line
}

/** The 1-based file line mermaid reads the diagram's type from, or null. */
export function typeLine(text) {
  const parsed = parsedText(text);
  let at = 0;
  for (const line of parsed.text.split("\n")) {
    if (line.split("%%")[0].trim()) return parsed.origin[at + line.length - line.trimStart().length] + 1;
    at += line.length + 1;
  }
  return null;
}

/** mermaid's error {message, line} for `text`, its lines counted in the file. */
export function inFileLines(text, error) {
  const message = String(error?.message ?? "");
  if (NO_TYPE.test(message)) return { ...error, message, line: typeLine(text) };
  return {
    ...error,
    message: message.replace(LINE_IN_MESSAGE, (_m, said, n) => said + fileLine(text, Number(n))),
    line: fileLine(text, error?.line ?? null),
  };
}
