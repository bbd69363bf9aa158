// The rows of a data file as the tiles draw them: CSV typed as vega's own
// loader types it ({type: "csv", parse: "auto"}: numbers, booleans and
// dates become values of their kind), JSON as an array of row objects
// (docs/dashboard.md, "Data formats"). A file too large to arrive with the
// content_update (over 2 MB) is fetched from the host's content route.

const PARQUET_READER = "PneumaParquet"; // a global a Parquet bundle may define
// The largest data file read, as data.py's default (PNEUMA_DASHBOARD_MAX_DATA_MB):
// a larger one is refused by its size before it is downloaded, never parsed
// into a frozen tab.
const MAX_DATA_BYTES = 16 * 1024 * 1024;
const megabytes = (bytes) => `${(bytes / (1024 * 1024)).toFixed(1)} MB`;

export class DataError extends Error {}

/** The records of CSV `text` (RFC 4180: quoted fields, "" inside quotes,
 * CRLF or LF) as arrays of strings. d3-dsv, which vega's own CSV reader
 * uses, builds its row objects with `new Function`, which the page's
 * script-src policy refuses; so the page splits CSV itself and lets vega
 * type the values. */
export function csvRecords(text) {
  const records = [];
  let record = [];
  let field = "";
  let quoted = false;
  let i = text.charCodeAt(0) === 0xfeff ? 1 : 0; // a byte-order mark is not part of the first name
  for (; i < text.length; i += 1) {
    const c = text[i];
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') {
        field += '"';
        i += 1;
      } else if (c === '"') quoted = false;
      else field += c;
    } else if (c === '"' && field === "") quoted = true;
    else if (c === ",") {
      record.push(field);
      field = "";
    } else if (c === "\n" || c === "\r") {
      if (c === "\r" && text[i + 1] === "\n") i += 1;
      record.push(field);
      records.push(record);
      record = [];
      field = "";
    } else field += c;
  }
  if (quoted) throw new DataError("a quoted field is not closed");
  if (field !== "" || record.length) {
    record.push(field);
    records.push(record);
  }
  return records.filter((r) => r.length > 1 || r[0] !== "");
}

/** CSV rows as objects of strings keyed by the header's names. */
function csvObjects(text) {
  const [header, ...records] = csvRecords(text);
  if (!header) return [];
  return records.map((record) => Object.fromEntries(header.map((name, i) => [name, record[i] ?? ""])));
}

/** The text (or bytes, for Parquet) of workspace file `path`. A text
 * format whose bytes are not UTF-8 (a picture saved as .csv) is refused
 * by name, as validate_board refuses it (data.py), never drawn as nothing. */
async function fileBody(path, files, ctx, binary) {
  const file = files.find((f) => f.path === path && !f.deleted);
  if (!file) throw new DataError(`${path} is not in the workspace`);
  if (!binary && typeof file.content === "string") return file.content;
  const response = await fetch(ctx.contentUrl(path), { credentials: "same-origin" });
  if (!response.ok) throw new DataError(`${path} could not be read (${response.status})`);
  const size = Number(response.headers.get("content-length"));
  if (size > MAX_DATA_BYTES) {
    response.body?.cancel();
    throw new DataError(`${path} is ${megabytes(size)}; the dashboard reads data files up to ${megabytes(MAX_DATA_BYTES)}`);
  }
  const bytes = await response.arrayBuffer();
  if (binary) return bytes;
  try {
    return new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch {
    throw new DataError(`${path} is not UTF-8 text; save it as UTF-8 CSV or JSON`);
  }
}

function jsonRows(path, text) {
  let rows;
  try {
    rows = JSON.parse(text);
  } catch (e) {
    throw new DataError(`${path} is not valid JSON: ${e.message}`);
  }
  if (!Array.isArray(rows) || rows.some((r) => !r || typeof r !== "object" || Array.isArray(r))) {
    throw new DataError(`${path} must be a JSON array of row objects`);
  }
  return rows;
}

async function parquetRows(path, bytes) {
  const reader = globalThis[PARQUET_READER];
  if (!reader?.readRows) throw new DataError(`${path}: Parquet files are not read in the page; use CSV or JSON`);
  return reader.readRows(bytes);
}

/** Rows of strings typed as vega's loader types them (parse "auto"), with
 * the fields it finds to be dates as Date objects rather than the epoch
 * milliseconds it gives: a table and the agent's context then read
 * 2025-01-01, and Vega-Lite draws either the same. */
function withDates(vega, objects) {
  const types = vega.inferTypes(objects, Object.keys(objects[0] || {}));
  const rows = vega.read(objects, { type: "json", parse: types });
  const dates = Object.keys(types).filter((field) => types[field] === "date");
  for (const row of dates.length ? rows : []) {
    for (const field of dates) if (typeof row[field] === "number") row[field] = new Date(row[field]);
  }
  return rows;
}

/** `[rows]` of `path`; throws a DataError naming the file and the reason. */
export async function loadRows(path, files, ctx, vega) {
  const suffix = (/\.[^./]+$/.exec(path)?.[0] || "").toLowerCase();
  if (!path.startsWith("data/")) throw new DataError(`${path}: data files live under data/`);
  if (suffix === ".csv") {
    const text = await fileBody(path, files, ctx, false);
    try {
      return withDates(vega, csvObjects(text));
    } catch (e) {
      throw new DataError(`${path} could not be read as CSV: ${e.message}`);
    }
  }
  if (suffix === ".json") return jsonRows(path, await fileBody(path, files, ctx, false));
  if (suffix === ".parquet") return parquetRows(path, await fileBody(path, files, ctx, true));
  throw new DataError(`${path}: ${suffix || "a file without a suffix"} is not a data format here (CSV, JSON, Parquet)`);
}

/** Rows of every data file the board names, loaded once each per content:
 * a data file that did not change keeps its rows across redraws. */
export class DataCache {
  constructor(ctx, vega) {
    this.ctx = ctx;
    this.vega = vega;
    this.entries = new Map(); // path → {stamp, promise}
  }

  stampOf(path, files) {
    const file = files.find((f) => f.path === path && !f.deleted);
    if (!file) return "missing";
    return typeof file.content === "string" ? file.content : `${file.mtime ?? ""}:${this.ctx.contentUrl(path)}`;
  }

  /** Resolves to {rows} or {error}. */
  rows(path, files) {
    const stamp = this.stampOf(path, files);
    const hit = this.entries.get(path);
    if (hit && hit.stamp === stamp) return hit.promise;
    const promise = loadRows(path, files, this.ctx, this.vega)
      .then((rows) => ({ rows }), (error) => ({ error: error.message || String(error) }));
    this.entries.set(path, { stamp, promise });
    return promise;
  }
}

function numbers(rows, field) {
  return rows.map((r) => r[field]).filter((v) => typeof v === "number" && Number.isFinite(v));
}

/** The value of a number tile over `rows`. */
export function aggregate(rows, field, how) {
  if (how === "count") return field ? rows.filter((r) => r[field] != null && r[field] !== "").length : rows.length;
  if (how === "last") return rows.length ? rows[rows.length - 1][field] : null;
  const values = numbers(rows, field);
  if (!values.length) return null;
  if (how === "sum") return values.reduce((a, b) => a + b, 0);
  if (how === "mean") return values.reduce((a, b) => a + b, 0) / values.length;
  if (how === "min") return Math.min(...values);
  if (how === "max") return Math.max(...values);
  return null;
}

/** A cell or datum value as a person reads it (dates as YYYY-MM-DD). */
export function plainValue(value) {
  if (value instanceof Date) {
    const iso = value.toISOString();
    return iso.endsWith("T00:00:00.000Z") ? iso.slice(0, 10) : iso;
  }
  if (value === null || value === undefined) return "";
  return typeof value === "object" ? JSON.stringify(value) : String(value);
}

/** A row or datum as plain JSON fields, without vega's internal ones. */
export function plainFields(datum, limit = 24) {
  const out = {};
  for (const key of Object.keys(datum || {}).slice(0, limit)) {
    const value = datum[key];
    if (typeof value === "function") continue;
    out[key] = value instanceof Date ? plainValue(value) : value;
  }
  return out;
}
