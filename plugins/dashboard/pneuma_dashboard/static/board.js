// dashboard.json as the page reads it: the board's grid and its tiles with
// the defaults of the file format (docs/dashboard.md, "The board file").
// The page is lenient where it can draw (a tile with a problem shows the
// problem inside itself and the others still draw); the full validation
// with JSON paths is the mode's validate_board tool and after-turn check.

export const BOARD_FILE = "dashboard.json";
export const TILE_TYPES = ["chart", "table", "number", "markdown"];
export const AGGREGATES = ["sum", "mean", "count", "min", "max", "last"];
const DEFAULT_COLUMNS = 12;
const DEFAULT_ROW_HEIGHT = 80;
const DEFAULT_LIMIT = 100;

/** The 1-based line of a JSON.parse error in `text`, when Chromium names a position. */
function errorLine(text, error) {
  const m = /position (\d+)/.exec(String(error?.message || ""));
  if (!m) return null;
  return text.slice(0, Number(m[1])).split("\n").length;
}

function whole(value, fallback) {
  return Number.isInteger(value) ? value : fallback;
}

function tileProblem(raw, columns) {
  if (typeof raw.id !== "string" || !raw.id) return "a tile needs a string id";
  if (!TILE_TYPES.includes(raw.type)) return `type "${raw.type}" is not one of ${TILE_TYPES.join(", ")}`;
  for (const key of ["x", "y", "w", "h"]) {
    if (!Number.isInteger(raw[key])) return `${key} must be a whole number of grid units`;
  }
  if (raw.x < 0 || raw.y < 0 || raw.w < 1 || raw.h < 1) return "x and y start at 0; w and h are at least 1";
  if (raw.x + raw.w > columns) return `x + w is ${raw.x + raw.w}, wider than the ${columns} columns`;
  if (raw.type !== "markdown" && typeof raw.data !== "string") return `a ${raw.type} tile needs "data": a file under data/`;
  if (raw.type === "chart" && (typeof raw.spec !== "object" || raw.spec === null || Array.isArray(raw.spec))) {
    return 'a chart tile needs "spec": a Vega-Lite object';
  }
  if (raw.type === "number" && typeof raw.field !== "string" && raw.aggregate !== "count") {
    return 'a number tile needs "field"';
  }
  if (raw.type === "number" && raw.aggregate !== undefined && !AGGREGATES.includes(raw.aggregate)) {
    return `aggregate "${raw.aggregate}" is not one of ${AGGREGATES.join(", ")}`;
  }
  return null;
}

/** One tile with defaults filled in, and `error` when it cannot be drawn. */
function readTile(raw, index, columns) {
  if (!raw || typeof raw !== "object" || Array.isArray(raw)) {
    return { id: `#${index + 1}`, type: "markdown", title: "", x: 0, y: index, w: 1, h: 1, index,
      error: `tiles[${index}] is not an object` };
  }
  const error = tileProblem(raw, columns);
  const w = Math.max(1, Math.min(columns, whole(raw.w, 4)));
  return {
    ...raw,
    id: typeof raw.id === "string" && raw.id ? raw.id : `#${index + 1}`,
    title: typeof raw.title === "string" ? raw.title : "",
    x: Math.max(0, Math.min(columns - w, whole(raw.x, 0))),
    y: Math.max(0, whole(raw.y, index)),
    w,
    h: Math.max(1, whole(raw.h, 3)),
    limit: whole(raw.limit, DEFAULT_LIMIT),
    aggregate: raw.aggregate ?? "sum",
    index,
    error: error ? `tiles[${index}] (${raw.id ?? "no id"}): ${error}` : null,
  };
}

/** `{board, error}`: the board of `text`, or the reason it cannot be read
 * (`error` = {message, line}). Tiles with the same id keep the first. */
export function readBoard(text) {
  let raw;
  try {
    raw = JSON.parse(text);
  } catch (e) {
    return { board: null, error: { message: `dashboard.json is not valid JSON: ${e.message}`, line: errorLine(text, e) } };
  }
  if (!raw || typeof raw !== "object" || Array.isArray(raw) || !Array.isArray(raw.tiles)) {
    return { board: null, error: { message: 'dashboard.json must be an object with a "tiles" array', line: null } };
  }
  const columns = Math.max(1, Math.min(48, whole(raw.columns, DEFAULT_COLUMNS)));
  const rowHeight = Math.max(16, Math.min(400, whole(raw.rowHeight, DEFAULT_ROW_HEIGHT)));
  const seen = new Set();
  const tiles = [];
  raw.tiles.forEach((t, i) => {
    const tile = readTile(t, i, columns);
    if (seen.has(tile.id)) tile.error ??= `tiles[${i}]: the id "${tile.id}" is used by an earlier tile`;
    seen.add(tile.id);
    tiles.push(tile);
  });
  return { board: { title: typeof raw.title === "string" ? raw.title : "", columns, rowHeight, tiles }, error: null };
}

/** What a tile draws, without its place: a tile whose definition is the
 * same after a change keeps its drawing (a move redraws nothing). */
export function tileDefinition(tile) {
  const { x, y, w, h, index, ...rest } = tile;
  return JSON.stringify(rest);
}

/** True when two {x, y, w, h} boxes share a cell. */
export function overlaps(a, b) {
  return a.x < b.x + b.w && b.x < a.x + a.w && a.y < b.y + b.h && b.y < a.y + a.h;
}
