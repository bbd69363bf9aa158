// What the draw viewer knows of drawings without Excalidraw: .excalidraw
// paths, a file parsed and composed back, and the viewer context a selection
// gives the agent (element descriptions, one line each).

export const EXT = ".excalidraw";
const MAX_CONTEXT_ELEMENTS = 25;
const MAX_TEXT = 80;

// --- small helpers ---------------------------------------------------------------

export const isDrawing = (path) => typeof path === "string" && path.toLowerCase().endsWith(EXT);
export const stem = (path) => path.split("/").pop().slice(0, -EXT.length);
const oneLine = (text) => {
  const flat = String(text).replace(/\s+/g, " ").trim();
  return flat.length > MAX_TEXT ? `${flat.slice(0, MAX_TEXT - 1)}…` : flat;
};
const attr = (value) => String(value).replace(/&/g, "&amp;").replace(/"/g, "&quot;").replace(/</g, "&lt;");
const quote = (text) => `"${String(text).replace(/"/g, '\\"')}"`;
export const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
export const normalizePath = (path) => String(path || "").trim().replace(/\\/g, "/").replace(/^(\.\/)+/, "").replace(/^\/+/, "");

export function compareDrawings(a, b) {
  // Top-level files first, then alphabetical: the picker reads like a file tree.
  const depth = (p) => p.split("/").length;
  return depth(a) - depth(b) || a.localeCompare(b);
}

/** What the agent needs to find an element: its id, type and words. */
export function describeElement(element, byId) {
  const item = { id: element.id, type: element.type, text: "" };
  if (element.type === "text") {
    item.text = element.originalText ?? element.text ?? "";
  } else {
    const label = (element.boundElements || []).find((b) => b && b.type === "text");
    const labelElement = label && byId.get(label.id);
    if (labelElement && !labelElement.isDeleted) item.text = labelElement.originalText ?? labelElement.text ?? "";
    if (element.type === "frame" || element.type === "magicframe") item.text = element.name ?? item.text;
  }
  if (element.type === "arrow" || element.type === "line") {
    const from = element.startBinding && element.startBinding.elementId;
    const to = element.endBinding && element.endBinding.elementId;
    if (from) item.from = from;
    if (to) item.to = to;
  }
  item.text = oneLine(item.text);
  return item;
}

function selectionLine(item) {
  let line = `- ${item.id} (${item.type})`;
  if (item.from || item.to) line += ` ${item.from || "?"} → ${item.to || "?"}`;
  if (item.text) line += ` ${quote(item.text)}`;
  return line;
}

export function contextFor(selection) {
  if (!selection || !selection.file) return "";
  const items = Array.isArray(selection.elements) ? selection.elements : [];
  const region = selection.region;
  if (region && !items.length) {
    const box = [region.x, region.y, region.width, region.height].map((n) => Math.round(Number(n) || 0));
    return `<viewer-context mode="draw" file="${attr(selection.file)}" region="${box.join(",")}">\n`
      + `A region of the canvas with no element in it: x ${box[0]}…${box[0] + box[2]}, y ${box[1]}…${box[1] + box[3]}.\n</viewer-context>`;
  }
  const open = `<viewer-context mode="draw" file="${attr(selection.file)}">`;
  if (!items.length) return `${open}\nNothing selected.\n</viewer-context>`;
  const shown = items.slice(0, MAX_CONTEXT_ELEMENTS);
  const lines = [`Selected ${items.length} element${items.length === 1 ? "" : "s"}:`, ...shown.map(selectionLine)];
  if (items.length > shown.length) lines.push(`- … and ${items.length - shown.length} more`);
  return `${open}\n${lines.join("\n")}\n</viewer-context>`;
}

export function chipLabel(file, items, t) {
  const name = stem(file.split("/").pop());
  if (items.length === 1) {
    const it = items[0];
    return `${name} · ${t(`type.${it.type}`, {}, it.type)}${it.text ? ` “${it.text.length > 30 ? it.text.slice(0, 29) + "…" : it.text}”` : ` ${it.id}`}`;
  }
  return t("chip.elements", { name, count: items.length });
}

export function blobToDataUrl(blob) {
  return new Promise((resolve, reject) => {
    const reader = new FileReader();
    reader.onload = () => resolve(reader.result);
    reader.onerror = () => reject(reader.error || new Error("could not read the PNG"));
    reader.readAsDataURL(blob);
  });
}

export const DARK = "(prefers-color-scheme: dark)";

/** The shell's theme: an explicit data-theme / class on <html>, else the person's preference. */
export function currentTheme() {
  const root = document.documentElement;
  const named = root.dataset.theme || (root.classList.contains("dark") ? "dark" : root.classList.contains("light") ? "light" : "");
  if (named) return named === "dark" ? "dark" : "light";
  return window.matchMedia && window.matchMedia(DARK).matches ? "dark" : "light";
}


export function parseDrawing(text) {
  let doc;
  try {
    doc = JSON.parse(text);
  } catch (err) {
    throw drawingProblem(`invalid JSON: ${err.message}`, "invalid.json", { message: err.message });
  }
  if (!doc || typeof doc !== "object" || Array.isArray(doc)) throw drawingProblem("not a JSON object", "invalid.object");
  if (!Array.isArray(doc.elements)) throw drawingProblem('no "elements" list', "invalid.elements");
  return doc;
}

/** An English error (for the agent and the console) that also names its
 * catalogue key, so that the page can say it in the person's language. */
function drawingProblem(message, problem, params = {}) {
  const error = new Error(message);
  error.problem = problem;
  error.params = params;
  return error;
}

/** The file as Excalidraw exports it, keeping the original's other top-level
 * keys, its `source` and every appState key Excalidraw does not manage. */
export function composeFile(original, exported) {
  const base = original && typeof original === "object" ? original : {};
  const doc = {
    type: base.type || exported.type || "excalidraw",
    version: base.version ?? exported.version ?? 2,
    source: base.source || "pneuma-draw",
    elements: exported.elements,
    appState: { ...(base.appState || {}), ...(exported.appState || {}) },
    files: exported.files || base.files || {},
  };
  for (const [key, value] of Object.entries(base)) if (!(key in doc)) doc[key] = value;
  return doc;
}

export function pick(object, keys) {
  const out = {};
  if (!object || typeof object !== "object") return out;
  for (const key of keys) if (object[key] !== undefined) out[key] = object[key];
  return out;
}

export const versionOf = (element) => `${element.version}:${element.versionNonce}:${element.isDeleted ? 1 : 0}`;
export const round = (n, digits = 0) => {
  const f = 10 ** digits;
  return Math.round(n * f) / f;
};

/** The selected elements as the agent reads them (a label selected with its
 * shape is described by the shape). */
export function selectedItems(elements, appState) {
  const ids = appState.selectedElementIds || {};
  const byId = new Map(elements.map((e) => [e.id, e]));
  const chosen = elements.filter((e) => ids[e.id] && !e.isDeleted);
  const chosenIds = new Set(chosen.map((e) => e.id));
  return chosen.filter((e) => !(e.type === "text" && e.containerId && chosenIds.has(e.containerId))).map((e) => describeElement(e, byId));
}

/** The elements an action names by id (every one when it names none), their
 * labels with them, and the ids not found. */
export function resolveTargets(api, ids) {
  const all = api.getSceneElements();
  if (ids == null) return { elements: all, missing: [] };
  if (!Array.isArray(ids)) throw new Error("elementIds must be an array of element ids");
  const wanted = new Set(ids.map(String));
  const found = new Set();
  const chosen = all.filter((e) => {
    if (wanted.has(e.id)) {
      found.add(e.id);
      return true;
    }
    // Labels come with their shapes and arrows.
    return e.type === "text" && e.containerId && wanted.has(e.containerId);
  });
  return { elements: chosen, missing: [...wanted].filter((id) => !found.has(id)) };
}

/** Bring `elements` into view (animated), zoomed in at most to `maxZoom`. */
export async function zoomTo(api, elements, maxZoom) {
  const duration = 300;
  const fit = { fitToViewport: true, viewportZoomFactor: 0.85, maxZoom, minZoom: 0.1 };
  api.scrollToContent(elements, { ...fit, animate: true, duration });
  await sleep(duration + 80);
  // On a busy machine the animation's frames come late and it may not have
  // reached its end yet: land on the end at once (this cancels what is left
  // of the animation), so whoever reads the view next reads where it settles.
  api.scrollToContent(elements, { ...fit, animate: false });
  let last = "";
  for (let i = 0; i < 40; i += 1) {
    const { zoom, scrollX, scrollY } = api.getAppState();
    const now = `${zoom.value}|${scrollX}|${scrollY}`;
    if (now === last) break;
    last = now;
    await sleep(25);
  }
}

/** Select the elements `ids` names and zoom to them (labels come along);
 * the ids found, in the order given, and those the drawing does not have
 * (a change that removed them). */
export async function selectAndZoom(api, ids) {
  const { elements, missing } = resolveTargets(api, ids);
  const found = new Set(elements.map((e) => e.id));
  const selected = [...new Set(ids.map(String))].filter((id) => found.has(id));
  if (elements.length) {
    api.updateScene({ appState: { selectedElementIds: Object.fromEntries(selected.map((id) => [id, true])) } });
    await zoomTo(api, elements, 2);
  }
  return { selected, missing };
}
