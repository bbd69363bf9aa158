// Where each drawn element of a diagram comes from in its .mmd source.
//
// Mermaid's SVG ids are generated ("pneuma-dg-3-flowchart-A-0",
// "edge4", "node_2"), and most diagram types give no id at all. After a
// render, mapSources() asks mermaid's own parser for the diagram's database
// (mermaidAPI.getDiagramFromText(text).db: the nodes, edges, participants,
// tasks, slices … as the source names them), finds each one's elements in
// the SVG, and marks them:
//
//   data-src-kind   node | edge | note | task | section | slice | period | event
//   data-src-id     the id or name as written in the source (may be empty:
//                   a message or a note has none)
//   data-src-label  what the person reads on it
//   data-src-from, data-src-to   an edge's ends, as source ids
//   data-src-line   the 1-based source line that says it
//   data-src-key    one number per source element: its label and its line
//                   or shape are highlighted together
//
// Mermaid's databases keep no line numbers, so the line is found in the
// text: the statement that names the id (an edge: both ends, in order, with
// its label), ignoring %% comments and front matter.

const LETTER = "[\\p{L}\\p{N}_]";

function escapeRe(s) {
  return String(s).replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

/** `id` as a whole token: "A" in "A-->B" and "A[x]", not in "AB" or "A-b". */
function tokenRe(id) {
  return new RegExp(`(?<!${LETTER})${escapeRe(id)}(?!${LETTER}|-${LETTER})`, "u");
}

/** Label text as it can be compared with a source line: no tags, no quotes
 * or markdown backticks, one space between words. */
function plain(s) {
  return String(s ?? "").replace(/<br\s*\/?>/gi, " ").replace(/<[^>]*>/g, "").replace(/[`"]/g, "")
    .replace(/\\n/g, " ").replace(/\s+/g, " ").trim();
}

function domText(el) {
  return (el?.textContent || "").replace(/\s+/g, " ").trim();
}

/** The source's lines, with what is not diagram text blanked out. */
export class SourceText {
  constructor(text) {
    const raw = String(text ?? "").split("\n").map((l) => l.replace(/\r$/, ""));
    let inFrontMatter = raw[0]?.trim() === "---";
    this.code = raw.map((line, i) => {
      if (inFrontMatter) {
        if (i > 0 && line.trim() === "---") inFrontMatter = false;
        return "";
      }
      return /^\s*%%/.test(line) ? "" : line;
    });
    // the first statement is the diagram's type ("flowchart TD"): no element is on it
    this.header = this.code.findIndex((l) => l.trim() !== "");
  }

  /** 1-based numbers of the lines (after the header) where `test` holds. */
  all(test) {
    const found = [];
    this.code.forEach((line, i) => {
      if (i > this.header && line.trim() && test(line)) found.push(i + 1);
    });
    return found;
  }

  /** The first line after line `after` (1-based; 0: from the top) where `test` holds. */
  first(test, after = 0) {
    return this.all(test).find((n) => n > after) ?? null;
  }

  /** The first line naming `id` as a token, preferring one `preferred` matches. */
  idLine(id, preferred = null) {
    if (!id) return null;
    const re = tokenRe(id);
    return (preferred && this.first((l) => preferred.test(l))) ?? this.first((l) => re.test(l));
  }

  /** The first line whose text contains `label`. */
  textLine(label, preferred = null) {
    const want = plain(label);
    if (!want) return null;
    return (preferred && this.first((l) => preferred.test(l) && plain(l).includes(want)))
      ?? this.first((l) => plain(l).includes(want));
  }

  /** The line of the `nth` (0-based) edge from `from` to `to` labelled
   * `label`: both ends on the line, `from` first when the source says so. */
  edgeLine(from, to, label, nth = 0) {
    const fromRe = tokenRe(from);
    const toRe = tokenRe(to);
    const ordered = (l) => {
      const m = fromRe.exec(l);
      return Boolean(m) && toRe.test(l.slice(m.index + m[0].length));
    };
    const either = (l) => fromRe.test(l) && toRe.test(l);
    const want = plain(label);
    for (const test of [ordered, either]) {
      let lines = this.all(test);
      if (want) {
        const labelled = lines.filter((n) => plain(this.code[n - 1]).includes(want));
        if (labelled.length) lines = labelled;
      }
      if (lines.length) return lines[Math.min(nth, lines.length - 1)];
    }
    return want ? this.textLine(want) : null;
  }
}

// --- marking ------------------------------------------------------------------------

class Marker {
  constructor(svg) {
    this.svg = svg;
    this.key = 0;
  }

  /** Mark `elements` (nulls skipped) as one source element. */
  mark(elements, { kind, id = "", label = "", from, to, line }) {
    const els = elements.filter(Boolean);
    if (!els.length) return;
    const key = String(++this.key);
    for (const el of els) {
      const d = el.dataset;
      d.srcKind = kind;
      d.srcId = id ?? "";
      d.srcLabel = plain(label);
      if (from != null) d.srcFrom = from;
      if (to != null) d.srcTo = to;
      if (line != null) d.srcLine = String(line);
      d.srcKey = key;
      if (kind === "node" && id) d.nodeId = id;
    }
  }

  /** The element mermaid gave the id "<svg id>-<domId>". Some types end
   * domIds in a counter that runs on across parses ("classId-Animal-2" when
   * drawn, "-5" in the re-parse): then any counter matches. */
  byDomId(domId, selector = null) {
    if (!domId) return null;
    const id = `${this.svg.id}-${domId}`;
    const fits = (el) => !selector || el.matches(selector);
    for (const el of this.svg.querySelectorAll(`[id="${CSS.escape(id)}"]`)) if (fits(el)) return el;
    const stem = /^(.*-)\d+$/.exec(id)?.[1];
    if (!stem) return null;
    for (const el of this.svg.querySelectorAll(`[id^="${CSS.escape(stem)}"]`)) {
      if (/^\d+$/.test(el.id.slice(stem.length)) && fits(el)) return el;
    }
    return null;
  }

  /** An edge's line and its label, by mermaid's edge id; an id ending in a
   * counter that differs between parses is matched by the rest of it, the
   * `nth` edge with that rest. */
  edgeElements(edgeId, nth = 0) {
    let id = String(edgeId);
    if (!this.svg.querySelector(`path[data-id="${CSS.escape(id)}"]`)) {
      const stem = /^(.*_)\d+$/.exec(id)?.[1];
      const same = stem ? [...this.svg.querySelectorAll(`path[data-id^="${CSS.escape(stem)}"]`)]
        .filter((p) => /^\d+$/.test(p.dataset.id.slice(stem.length))) : [];
      if (same.length) id = same[Math.min(nth, same.length - 1)].dataset.id;
    }
    const q = CSS.escape(id);
    const path = this.svg.querySelector(`path[data-id="${q}"]`) || this.byDomId(id, "path");
    const label = this.svg.querySelector(`[data-id="${q}"]:not(path)`)?.closest("g.edgeLabel");
    return [path, label && domText(label) ? label : null];
  }
}

function nthOf(list, index, same) {
  let n = 0;
  for (let i = 0; i < index; i++) if (same(list[i])) n++;
  return n;
}

// --- graph diagrams: flowchart, class, state, ER, mindmap (db.getData()) -------------

/** Nodes and edges from `data` ({nodes, edges} of mermaid's unified
 * renderer); `naming` says how the type writes them in its source. */
function markGraph(marker, src, data, naming) {
  const nameOf = new Map();
  for (const n of data.nodes || []) nameOf.set(n.id, naming.name(n));
  for (const n of data.nodes || []) {
    const id = nameOf.get(n.id);
    const el = marker.byDomId(n.domId, "g") || marker.byDomId(n.id, "g")
      || marker.svg.querySelector(`g[data-id="${CSS.escape(String(n.id))}"]`);
    if (!el) continue;
    const label = naming.label?.(n, el) ?? (plain(n.label) || domText(el) || id);
    marker.mark([el], { kind: "node", id: naming.shownId?.(n) ?? id, label, line: naming.line(n, id) });
  }
  const edges = data.edges || [];
  edges.forEach((e, i) => {
    const from = nameOf.get(e.start) ?? String(e.start);
    const to = nameOf.get(e.end) ?? String(e.end);
    const nth = nthOf(edges, i, (o) => o.start === e.start && o.end === e.end);
    marker.mark(marker.edgeElements(e.id, nth), {
      kind: "edge", id: naming.edgeId ? naming.edgeId(e) : "",
      label: plain(e.label), from: naming.shownEnd?.(from) ?? from, to: naming.shownEnd?.(to) ?? to,
      line: naming.edgeLine ? naming.edgeLine(e)
        : src.edgeLine(naming.endToken?.(from) ?? from, naming.endToken?.(to) ?? to, e.label, nth),
    });
  });
}

// Only a flowchart's edge ids are kept: L_<from>_<to>_<n>, the n-th edge
// between the two (or the id written as `e1@-->`); other types number their
// edges across the whole diagram.
const FLOWCHART = (src) => ({
  name: (n) => String(n.id),
  label: (n, el) => (n.isGroup ? plain(n.label) || n.id : domText(el) || plain(n.label) || n.id),
  line: (n, id) => src.idLine(id, n.isGroup ? new RegExp(`^\\s*subgraph\\s+${escapeRe(id)}(?![\\w-])`) : null),
  edgeId: (e) => String(e.id),
});

const CLASS = (src) => ({
  name: (n) => String(n.id),
  label: (n) => plain(n.label) || n.id,
  line: (n, id) => src.idLine(id, new RegExp(`^\\s*class\\s+${escapeRe(id)}(?![\\w-])`)),
});

// stateDiagram: "[*]" is written for every start and end state; mermaid
// names them root_start, Moving_end, … and draws them with the shapes
// stateStart and stateEnd.
const PSEUDO_SHAPES = { stateStart: "start", stateEnd: "end" };
function stateNaming(src, data) {
  const pseudo = new Map();
  for (const n of data.nodes || []) if (PSEUDO_SHAPES[n.shape]) pseudo.set(String(n.id), PSEUDO_SHAPES[n.shape]);
  return {
    name: (n) => String(n.id),
    shownId: (n) => (pseudo.has(String(n.id)) ? "[*]" : String(n.id)),
    label: (n, el) => pseudo.get(String(n.id)) ?? (plain(n.label) || domText(el) || n.id),
    line: (n, id) => {
      const which = pseudo.get(id);
      // a [*] is where its transition is written
      const edge = which && (data.edges || []).find((e) => e.start === n.id || e.end === n.id);
      if (edge) {
        const token = (end) => (pseudo.has(String(end)) ? "[*]" : String(end));
        const line = src.edgeLine(token(edge.start), token(edge.end), edge.label);
        if (line) return line;
      }
      // else, inside a composite state: the first such line in its block
      const opens = n.parentId && new RegExp(`^\\s*state\\s+${escapeRe(n.parentId)}\\s*\\{`);
      const block = opens ? src.first((l) => opens.test(l)) ?? 0 : 0;
      if (which === "start") return src.first((l) => /\[\*\]\s*-->/.test(l), block);
      if (which === "end") return src.first((l) => /-->\s*\[\*\]/.test(l), block);
      return src.idLine(id, new RegExp(`^\\s*state\\s+(?:"[^"]*"\\s+as\\s+)?${escapeRe(id)}(?![\\w-])`));
    },
    shownEnd: (id) => (pseudo.has(id) ? "[*]" : id),
    endToken: (id) => (pseudo.has(id) ? "[*]" : id),
  };
}

function erNaming(src, db) {
  const names = new Map();
  const aliases = new Map();
  for (const [name, entity] of db.getEntities?.() ?? new Map()) {
    names.set(entity.id, name);
    if (entity.alias) aliases.set(entity.id, entity.alias); // p[Person]: the drawing says Person
  }
  return {
    name: (n) => names.get(n.id) ?? String(n.label ?? n.id),
    label: (n) => plain(aliases.get(n.id) ?? n.label) || names.get(n.id) || n.id,
    line: (n, id) => src.idLine(id, new RegExp(`^\\s*${escapeRe(id)}\\s*(?:\\[[^\\]]*\\]\\s*)?\\{`)),
  };
}

// mindmap: one node per line, in order, below the header (a line that
// starts with "::" decorates the node above it: ::icon(), :::class).
function mindmapNaming(src, db) {
  const byNumber = new Map();
  const walk = (node) => {
    if (!node) return;
    byNumber.set(String(node.id), node);
    for (const child of node.children || []) walk(child);
  };
  walk(db.getMindmap?.());
  const nodeLines = src.all((l) => !/^\s*::/.test(l));
  const lineOf = (number, id) => {
    const node = byNumber.get(String(number));
    const guess = nodeLines[Number(number)];
    const text = guess ? src.code[guess - 1] : "";
    if (guess && (tokenRe(id).test(text) || plain(text).includes(plain(node?.descr)))) return guess;
    return src.idLine(id) ?? src.textLine(node?.descr);
  };
  const nameOf = (number) => String(byNumber.get(String(number))?.nodeId ?? number);
  return {
    name: (n) => nameOf(n.id),
    label: (n) => plain(byNumber.get(String(n.id))?.descr ?? n.label),
    line: (n, id) => lineOf(n.id, id),
    // the child's line says it: indentation is the edge
    edgeLine: (e) => lineOf(e.end, nameOf(e.end)),
  };
}

// --- sequence ------------------------------------------------------------------------

function markSequence(marker, src, db) {
  const svg = marker.svg;
  const actors = db.getActors?.() ?? new Map();
  for (const [id, actor] of actors) {
    const q = CSS.escape(id);
    const els = [...svg.querySelectorAll(`[data-et=participant][data-id="${q}"], [name="${q}"]:not(line)`)];
    // a box's label is its sibling, not its child: both point at the participant
    for (const el of [...els]) {
      if (el.tagName.toLowerCase() !== "rect") continue;
      els.push(...[...el.parentElement.children].filter((c) => c.matches("text.actor")));
    }
    const line = src.idLine(id, new RegExp(`^\\s*(?:create\\s+)?(?:participant|actor)\\s+${escapeRe(id)}(?![\\w-])`));
    marker.mark(els, { kind: "node", id, label: plain(actor.description) || id, line });
  }
  const messages = db.getMessages?.() ?? [];
  messages.forEach((m, i) => {
    const els = [...svg.querySelectorAll(`[data-id="i${CSS.escape(String(m.id ?? i))}"]`)];
    if (!els.length) return;
    const shown = els.find((e) => e.dataset.et === "message");
    if (shown) {
      let text = shown.previousElementSibling;
      while (text && !text.matches("text.messageText")) text = text.previousElementSibling;
      if (text) els.push(text);
      const nth = nthOf(messages, i, (o) => o.from === m.from && o.to === m.to && o.message === m.message);
      marker.mark(els, { kind: "edge", label: m.message, from: m.from, to: m.to,
        line: src.edgeLine(m.from, m.to, m.message, nth) });
    } else if (els.some((e) => e.dataset.et === "note")) {
      marker.mark(els, { kind: "note", label: m.message, line: src.textLine(m.message, /^\s*note\b/i) });
    }
  });
}

// --- charts: gantt, pie, journey, timeline ----------------------------------------------

function markGantt(marker, src, db) {
  for (const task of db.getTasks?.() ?? []) {
    const name = plain(task.task);
    const written = task.id && tokenRe(task.id).test(task.raw?.data ?? "");
    marker.mark([marker.byDomId(task.id), marker.byDomId(`${task.id}-text`)], {
      kind: "task", id: written ? task.id : name, label: name,
      line: src.first((l) => new RegExp(`^\\s*${escapeRe(name)}\\s*:`).test(l)) ?? src.textLine(name),
    });
  }
  markSections(marker, src, marker.svg.querySelectorAll("text.sectionTitle"));
}

function markSections(marker, src, elements, names = null) {
  [...elements].forEach((el, i) => {
    const name = names ? plain(names[i]) : domText(el);
    if (!name) return;
    marker.mark([el], { kind: "section", id: name, label: name,
      line: src.first((l) => new RegExp(`^\\s*section\\s+${escapeRe(name)}\\s*$`).test(l)) });
  });
}

function markPie(marker, src, db) {
  const sections = [...(db.getSections?.() ?? new Map())];
  const sum = sections.reduce((acc, [, v]) => acc + v, 0) || 1;
  // mermaid draws a slice only for sections of at least 1% (pieRenderer.ts)
  const drawn = sections.filter(([, v]) => (v / sum) * 100 >= 1 && ((v / sum) * 100).toFixed(0) !== "0");
  const slices = [...marker.svg.querySelectorAll("path.pieCircle")];
  const percents = [...marker.svg.querySelectorAll("text.slice")];
  const legends = [...marker.svg.querySelectorAll("g.legend")];
  const lineOf = (name) => src.first((l) => new RegExp(`"${escapeRe(name)}"\\s*:`).test(l)) ?? src.textLine(name);
  for (const [name, value] of sections) {
    const i = drawn.findIndex(([n]) => n === name);
    const els = [legends[sections.findIndex(([n]) => n === name)]];
    if (i >= 0) els.push(slices[i], percents[i]);
    marker.mark(els, { kind: "slice", id: name, label: `${name}: ${value}`, line: lineOf(name) });
  }
}

function markJourney(marker, src, db) {
  const tasks = db.getTasks?.() ?? [];
  for (const line of marker.svg.querySelectorAll("line.task-line[id]")) {
    const index = Number(/-task(\d+)$/.exec(line.id)?.[1]);
    const task = tasks[index];
    if (!task) continue;
    const name = plain(task.task);
    marker.mark([line.parentElement], { kind: "task", id: name, label: name,
      line: src.first((l) => new RegExp(`^\\s*${escapeRe(name)}\\s*:`).test(l)) ?? src.textLine(name) });
  }
  // one box per section, in order; its text is drawn twice (HTML and SVG)
  markSections(marker, src, [...marker.svg.querySelectorAll("rect.journey-section")].map((r) => r.parentElement),
    db.getSections?.() ?? []);
}

function markTimeline(marker, src) {
  for (const node of marker.svg.querySelectorAll("g.timeline-node")) {
    const text = domText(node);
    if (!text) continue;
    const wrapper = node.parentElement;
    if (wrapper?.matches("g.eventWrapper")) {
      const re = new RegExp(`:\\s*${escapeRe(text)}\\s*(?::|$)`);
      marker.mark([node], { kind: "event", id: text, label: text,
        line: src.first((l) => re.test(l)) ?? src.textLine(text) });
    } else if (wrapper?.matches("g.taskWrapper")) {
      const re = new RegExp(`^\\s*${escapeRe(text)}\\s*(?::|$)`);
      marker.mark([node], { kind: "period", id: text, label: text,
        line: src.first((l) => re.test(l)) ?? src.textLine(text) });
    } else {
      marker.mark([node], { kind: "section", id: text, label: text,
        line: src.first((l) => new RegExp(`^\\s*section\\s+${escapeRe(text)}\\s*$`).test(l)) });
    }
  }
}

// --- any other type: what the SVG says, lines by label ------------------------------------

const NODE_ID_PREFIXES = /^(?:flowchart|entity|classId|state|id)-/;

function markFromSvg(marker, src) {
  const svg = marker.svg;
  for (const node of svg.querySelectorAll("g.node")) {
    if (node.dataset.srcKind) continue;
    let id = node.getAttribute("data-id") || node.id || "";
    if (id.startsWith(svg.id + "-")) id = id.slice(svg.id.length + 1);
    id = id.replace(NODE_ID_PREFIXES, "").replace(/-\d+$/, "");
    const label = domText(node) || id;
    marker.mark([node], { kind: "node", id, label, line: src.idLine(id) ?? src.textLine(label) });
  }
}

// --- entry point ------------------------------------------------------------------------

/** Mark every element of `svg` (just rendered from `text`) that stands for
 * something in the source. Never throws: what cannot be mapped stays
 * unmarked, and the SVG's own ids are used for plain nodes. */
export async function mapSources(mermaid, text, svg, diagramType) {
  const marker = new Marker(svg);
  const src = new SourceText(text);
  let db = null;
  try {
    db = (await mermaid.mermaidAPI.getDiagramFromText(text)).db;
  } catch {
    db = null; // it rendered, so this does not happen; the SVG fallback below still marks nodes
  }
  try {
    const type = String(diagramType || "");
    if (db && /^(flowchart|graph)/.test(type)) markGraph(marker, src, db.getData(), FLOWCHART(src));
    else if (db && /^class/.test(type)) markGraph(marker, src, db.getData(), CLASS(src));
    else if (db && /^state/.test(type)) {
      const data = db.getData();
      markGraph(marker, src, data, stateNaming(src, data));
    }
    else if (db && type === "er") markGraph(marker, src, db.getData(), erNaming(src, db));
    else if (db && type === "mindmap") markGraph(marker, src, db.getData(), mindmapNaming(src, db));
    else if (db && type === "sequence") markSequence(marker, src, db);
    else if (db && type === "gantt") markGantt(marker, src, db);
    else if (db && type === "pie") markPie(marker, src, db);
    else if (db && type === "journey") markJourney(marker, src, db);
    else if (type === "timeline") markTimeline(marker, src);
  } catch (e) {
    console.debug("diagram: source map incomplete", e); // a mermaid internal changed shape
  }
  markFromSvg(marker, src);
}
