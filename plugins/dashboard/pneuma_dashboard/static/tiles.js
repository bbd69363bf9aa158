// The body of each kind of tile: a Vega-Lite chart (vega-embed, the file's
// rows injected as the spec's data values), a table, a key number, a
// Markdown note. Each drawer returns {values, rows, finalize} where
// `values` is what the tile draws (get-tile reports it) and throws with a
// message a person can act on when it cannot draw.

import { h } from "/static/lib/viewer-helpers.js";
import { MarkdownIt } from "/static/lib/markdown-it.js";
import { aggregate, plainFields, plainValue } from "./data.js";

const MAX_VALUES = 50; // of a chart's drawn data in get-tile
// Vega-Lite 5's marks: a misspelt one makes vega-lite fail deep inside with
// a message that does not name it, so the page names it first.
const MARKS = ["arc", "area", "bar", "image", "line", "point", "rect", "rule", "text", "tick", "trail",
  "circle", "square", "geoshape", "boxplot", "errorband", "errorbar"];
const markdown = new MarkdownIt({ html: false, linkify: true, breaks: false });

/** The tile's spec with the data injected and sized to its box unless it
 * sets its own size. A spec's own "data" is replaced: the host owns data. */
export function chartSpec(spec, rows) {
  const sized = "mark" in spec || "layer" in spec;
  const out = { ...spec, data: { values: rows } };
  if (sized) {
    out.width ??= "container";
    out.height ??= "container";
    out.autosize ??= { type: "fit", contains: "padding" };
  }
  return out;
}

/** The first unknown mark in `spec` (and its layers, concats, facets), as a message. */
export function markProblem(spec, path = "spec") {
  if (!spec || typeof spec !== "object") return null;
  if ("mark" in spec) {
    const type = typeof spec.mark === "string" ? spec.mark : spec.mark?.type;
    if (!MARKS.includes(type)) return `${path}.mark: "${type}" is not a Vega-Lite mark (${MARKS.join(", ")})`;
  }
  for (const key of ["layer", "hconcat", "vconcat", "concat"]) {
    for (const [i, part] of (Array.isArray(spec[key]) ? spec[key] : []).entries()) {
      const problem = markProblem(part, `${path}.${key}[${i}]`);
      if (problem) return problem;
    }
  }
  return spec.spec ? markProblem(spec.spec, `${path}.spec`) : null;
}

// The sub-views a Vega-Lite spec nests (as specs.py's _VIEW_KEYS).
const VIEW_KEYS = ["layer", "hconcat", "vconcat", "concat", "spec"];

/** [path, field] of every field the spec's encodings read (specs.py's encoded_fields). */
function encodedFields(view, path = "spec", out = []) {
  for (const [channel, definition] of Object.entries(view?.encoding || {})) {
    const items = Array.isArray(definition) ? definition : [definition];
    items.forEach((item, n) => {
      const where = `${path}.encoding.${channel}` + (Array.isArray(definition) ? `[${n}]` : "");
      if (typeof item?.field === "string") out.push([`${where}.field`, item.field]);
    });
  }
  for (const key of VIEW_KEYS) {
    const sub = view?.[key];
    if (Array.isArray(sub)) sub.forEach((item, n) => encodedFields(item, `${path}.${key}[${n}]`, out));
    else if (sub && typeof sub === "object") encodedFields(sub, `${path}.${key}`, out);
  }
  return out;
}

/** Field names the spec's transforms make ("as", fold's key and value; specs.py's made_fields). */
function madeFields(value, made = new Set()) {
  if (Array.isArray(value)) value.forEach((item) => madeFields(item, made));
  else if (value && typeof value === "object") {
    for (const [key, item] of Object.entries(value)) {
      if (key === "as") for (const name of [item].flat()) if (typeof name === "string") made.add(name);
      if (key === "fold") ["key", "value"].forEach((name) => made.add(name));
      madeFields(item, made);
    }
  }
  return made;
}

/** The first encoded field the rows lack, named as validate_board names it:
 * Vega-Lite draws such a chart empty and says nothing. */
function fieldProblem(spec, rows, file) {
  if (!rows.length) return null;
  const columns = Object.keys(rows[0]);
  const have = new Set([...columns, ...madeFields(spec)]);
  for (const [path, name] of encodedFields(spec)) {
    // "a.b" reads field b of column a; "a\.b" is the column "a.b" (specs.py's data_field)
    const column = name.split(/(?<!\\)[.[]/)[0].replaceAll("\\.", ".").replaceAll("\\[", "[");
    if (have.has(column) || have.has(name)) continue;
    const shown = columns.slice(0, 20).join(", ") + (columns.length > 20 ? ", …" : "");
    return `${path}: "${name}" is not a field of ${file} (its fields: ${shown})`;
  }
  return null;
}

function prefersDark() {
  return Boolean(globalThis.matchMedia?.("(prefers-color-scheme: dark)").matches);
}

/** What the marks of a vega view draw: each mark item's datum, deduplicated. */
function drawnValues(view) {
  const out = [];
  const seen = new Set();
  const walk = (node) => {
    for (const item of node?.items || []) {
      if (out.length >= MAX_VALUES) return;
      if (item.items) walk(item);
      else if (item.datum && item.mark?.marktype !== "group" && item.mark?.role !== "axis-label"
        && !String(item.mark?.role || "").startsWith("axis") && !String(item.mark?.role || "").startsWith("legend")) {
        const fields = plainFields(item.datum);
        const key = JSON.stringify(fields);
        if (!seen.has(key)) {
          seen.add(key);
          out.push(fields);
        }
      }
    }
  };
  walk(view.scenegraph().root);
  return out;
}

/** A chart tile: resolves to {view, values, finalize}. `onPick(datum)`
 * is called with the clicked mark's datum. */
export async function drawChart(body, tile, rows, vendor, onPick) {
  const problem = markProblem(tile.spec) || fieldProblem(tile.spec, rows, tile.data);
  if (problem) throw new Error(problem);
  const holder = h("div", { class: "db-chart" });
  body.replaceChildren(holder);
  let result;
  try {
    result = await vendor.vegaEmbed(holder, chartSpec(tile.spec, rows), {
      renderer: "svg",
      actions: false,
      // vega's expressions without `new Function` (the page's script-src policy)
      ast: true,
      expr: vendor.expressionInterpreter,
      logLevel: 0,
      // the shell's colours follow the system's scheme; so do the charts' axes and labels
      ...(prefersDark() ? { theme: "dark", config: { background: null } } : {}),
    });
  } catch (e) {
    throw new Error(`Vega-Lite cannot draw this spec: ${e?.message || e}`);
  }
  const view = result.view;
  view.addEventListener("click", (event, item) => {
    if (item?.datum && item.mark?.marktype !== "group") onPick(item.datum, item, event);
  });
  return { view, values: () => drawnValues(view), finalize: () => result.finalize() };
}

/** A table tile: its columns (default: every field of the first rows) and
 * at most `limit` rows; `onPick(row, index)` on a click of a row. */
export function drawTable(body, tile, rows, onPick) {
  const columns = Array.isArray(tile.columns) && tile.columns.length ? tile.columns
    : [...new Set(rows.slice(0, 50).flatMap((r) => Object.keys(r)))];
  const shown = rows.slice(0, Math.max(0, tile.limit));
  const table = h("table", { class: "db-table" },
    h("thead", {}, h("tr", {}, columns.map((c) => h("th", { scope: "col", text: c })))),
    h("tbody", {}, shown.map((row, i) => h("tr", { "data-row": String(i), onclick: (event) => onPick(row, i, event) },
      columns.map((c) => h("td", { class: typeof row[c] === "number" ? "num" : null, text: plainValue(row[c]) }))))));
  // Focusable: a keyboard can scroll it (axe-core: scrollable-region-focusable).
  body.replaceChildren(h("div", { class: "db-table-wrap", tabindex: "0" }, table));
  return { values: () => shown.slice(0, MAX_VALUES).map((r) => plainFields(r)), columns, shownRows: shown.length };
}

/** A number tile: the aggregate of its field, formatted with d3-format. */
export function drawNumber(body, tile, rows, vendor) {
  const value = aggregate(rows, tile.field, tile.aggregate);
  let text = plainValue(value);
  if (typeof value === "number" && tile.format) {
    try {
      text = vendor.vega.defaultLocale().format(tile.format)(value);
    } catch (e) {
      throw new Error(`format "${tile.format}" is not a d3-format string: ${e.message}`);
    }
  }
  body.replaceChildren(h("div", { class: "db-number" },
    h("div", { class: "db-number-value", text: value === null ? "—" : text }),
    tile.label ? h("div", { class: "db-number-label", text: tile.label }) : null));
  // the figure's length sizes it to its tile (viewer.css); CSSOM, not a style attribute the page's policy may refuse
  body.querySelector(".db-number-value").style.setProperty("--db-chars", String(Math.max(4, [...text].length)));
  return { values: () => [{ value, text, field: tile.field ?? null, aggregate: tile.aggregate }] };
}

/** A Markdown tile, rendered by the page's one markdown-it with raw HTML off. */
export function drawMarkdown(body, tile) {
  const note = h("div", { class: "db-markdown" });
  note.innerHTML = markdown.render(String(tile.text ?? ""));
  for (const link of note.querySelectorAll("a")) {
    link.target = "_blank";
    link.rel = "noopener noreferrer";
  }
  body.replaceChildren(note);
  return { values: () => [{ text: String(tile.text ?? "") }] };
}
