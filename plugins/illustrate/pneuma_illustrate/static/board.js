// The illustrate workspace as the viewer reads it (the file format of
// docs/illustrate.md): board.json's rows, each image's record beside it in
// images/<id>.json, and the person's marks in choices.json. Pure functions
// over the shell's file snapshot, so the live mount, a snapshot mount and the
// tests read the same thing the same way.

export const BOARD_FILE = "board.json";
export const CHOICES_FILE = "choices.json";
const IMAGE = /^images\/([^/]+)\.(png|jpe?g|webp)$/i;
const RECORD = /^images\/([^/]+)\.json$/i;
const MAX_CHAIN = 20; // a parent chain longer than this (or a loop) is cut
export const STATUSES = ["picked", "rejected"];

function fileText(files, path) {
  const file = (files || []).find((f) => f.path === path && !f.deleted);
  return file && typeof file.content === "string" ? file.content : null;
}

function isObject(value) {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

/** board.json as {board, error}: a board of {title, rows: [{id, title, prompt,
 * images}]} with what is malformed left out, or null and the reason (English:
 * the agent reads it too). A missing file is an empty board, not an error. */
export function readBoard(files) {
  const text = fileText(files, BOARD_FILE);
  if (text === null) return { board: { title: "", rows: [] }, error: null, missing: true, warnings: [] };
  let data;
  try {
    data = JSON.parse(text);
  } catch (error) {
    return { board: null, error: `board.json is not valid JSON: ${error.message}` };
  }
  if (!isObject(data) || !Array.isArray(data.rows)) {
    return { board: null, error: "board.json must be an object with a \"rows\" array" };
  }
  const rows = [];
  const warnings = []; // what is left out or made up, so the page and the agent can name it
  const seen = new Set();
  data.rows.forEach((row, index) => {
    if (!isObject(row)) {
      warnings.push(`row ${index + 1} is not an object and is left out`);
      return;
    }
    const named = typeof row.id === "string" && row.id;
    const id = named ? row.id : `row-${index + 1}`;
    if (seen.has(id)) {
      warnings.push(`row ${index + 1} repeats the id "${id}" and is left out`);
      return;
    }
    seen.add(id);
    if (!named) warnings.push(`row ${index + 1} has no "id" (shown as ${id})`);
    rows.push({ id, title: typeof row.title === "string" ? row.title : "",
      prompt: typeof row.prompt === "string" ? row.prompt : "", images: rowImages(row, id, warnings) });
  });
  return { board: { title: typeof data.title === "string" ? data.title : "", rows }, error: null, warnings };
}

function rowImages(row, id, warnings) {
  if (row.images === undefined) return [];
  if (!Array.isArray(row.images)) {
    warnings.push(`row "${id}": "images" is not a list of image ids`);
    return [];
  }
  const images = row.images.filter((i) => typeof i === "string" && i);
  const dropped = row.images.length - images.length;
  if (dropped === 1) warnings.push(`row "${id}": 1 entry of "images" is not an image id and is left out`);
  else if (dropped) warnings.push(`row "${id}": ${dropped} entries of "images" are not image ids and are left out`);
  return images;
}

/** Each image file and record under images/, by id. */
export function readImages(files) {
  const paths = new Map();
  const records = new Map();
  for (const file of files || []) {
    if (file.deleted) continue;
    let m = IMAGE.exec(file.path);
    if (m && !paths.has(m[1])) paths.set(m[1], file.path);
    m = RECORD.exec(file.path);
    if (m && typeof file.content === "string") {
      try {
        const record = JSON.parse(file.content);
        if (isObject(record)) records.set(m[1], record);
      } catch {
        records.set(m[1], { broken: true });
      }
    }
  }
  return { paths, records };
}

/** One mark as the viewer keeps it: {status, starred, comment}. */
export function normalizeMark(value) {
  const mark = isObject(value) ? value : {};
  return {
    status: STATUSES.includes(mark.status) ? mark.status : null,
    starred: mark.starred === true,
    comment: typeof mark.comment === "string" ? mark.comment : "",
  };
}

export function isBlank(mark) {
  return !mark.status && !mark.starred && !mark.comment;
}

/** choices.json as {choices: {id: mark}, text, error}. */
export function readChoices(files) {
  const text = fileText(files, CHOICES_FILE);
  if (text === null) return { choices: {}, text: null, error: null };
  let data;
  try {
    data = JSON.parse(text);
  } catch (error) {
    return { choices: {}, text, error: `choices.json is not valid JSON: ${error.message}` };
  }
  if (!isObject(data)) return { choices: {}, text, error: "choices.json must be an object keyed by image id" };
  const choices = {};
  for (const [id, value] of Object.entries(data)) choices[id] = normalizeMark(value);
  return { choices, text, error: null };
}

/** choices.json's text with `marks` ({id: mark}) set over `text`'s entries:
 * every other entry (and any field a newer Pneuma adds) is kept as it is. */
export function writeChoices(text, marks) {
  let data = {};
  try {
    const parsed = text === null ? {} : JSON.parse(text);
    if (isObject(parsed)) data = parsed;
  } catch {
    data = {};
  }
  for (const [id, mark] of Object.entries(marks)) {
    const old = isObject(data[id]) ? data[id] : {};
    data[id] = { ...old, status: mark.status, starred: mark.starred, comment: mark.comment };
  }
  return JSON.stringify(data, null, 2) + "\n";
}

/** The changes from `before` to `after` ({id: mark} each), one line each, in
 * the agent's words: "picked lighthouse-2", "comment on fox-1: “…”". */
export function markChanges(before, after) {
  const lines = [];
  const ids = new Set([...Object.keys(before || {}), ...Object.keys(after || {})]);
  for (const id of ids) {
    const a = normalizeMark(before?.[id]);
    const b = normalizeMark(after?.[id]);
    if (a.status !== b.status) lines.push({ id, change: b.status || "unmarked", line: `${b.status || `no longer ${a.status}`} ${id}` });
    if (a.starred !== b.starred) lines.push({ id, change: b.starred ? "starred" : "unstarred", line: `${b.starred ? "starred" : "unstarred"} ${id}` });
    if (a.comment !== b.comment) {
      lines.push({ id, change: "comment", comment: b.comment,
        line: b.comment ? `comment on ${id}: "${b.comment}"` : `removed the comment on ${id}` });
    }
  }
  return lines;
}

/** The images an image was made from: its parent, the parent's parent, … */
export function parentChain(id, records) {
  const chain = [];
  const seen = new Set([id]);
  let parent = records.get(id)?.parent;
  while (typeof parent === "string" && parent && !seen.has(parent) && chain.length < MAX_CHAIN) {
    chain.push(parent);
    seen.add(parent);
    parent = records.get(parent)?.parent;
  }
  return chain;
}

/** The rows to lay out: board.json's, each image with its file and record,
 * then the images under images/ that no row lists (so nothing the agent
 * made is out of sight). */
export function layout(files) {
  const { board, error, missing, warnings = [] } = readBoard(files);
  const { paths, records } = readImages(files);
  if (!board) return { title: "", rows: [], error, warnings, paths, records, missing: false };
  const listed = new Set();
  const cell = (id) => {
    listed.add(id);
    return { id, path: paths.get(id) || null, record: records.get(id) || null };
  };
  const rows = board.rows.map((row) => ({ ...row, images: row.images.map(cell), unlisted: false }));
  const rest = [...paths.keys()].filter((id) => !listed.has(id)).sort();
  if (rest.length) {
    rows.push({ id: "", title: "", prompt: "", images: rest.map(cell), unlisted: true });
  }
  return { title: board.title, rows, error: null, warnings, paths, records, missing: Boolean(missing) };
}

/** Where an image is: its row (or null) and its cell. */
export function findImage(view, id) {
  for (const row of view.rows) {
    const cell = row.images.find((c) => c.id === id);
    if (cell) return { row, cell };
  }
  return null;
}

/** An image's prompt: its record's, else its row's. */
export function promptOf(view, id) {
  const found = findImage(view, id);
  const record = view.records.get(id);
  if (record && typeof record.prompt === "string") return record.prompt;
  return found ? found.row.prompt : "";
}
