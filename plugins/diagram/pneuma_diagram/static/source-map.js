// Where each drawn element of a diagram comes from in its .mmd source.
//
// Mermaid's SVG ids are generated ("pneuma-dg-3-flowchart-A-0",
// "edge4", "node_2"), and most diagram types give no id at all. After a
// render, mapSources() asks mermaid's own parser for the diagram's database
// (mermaidAPI.getDiagramFromText(text).db: the nodes, edges, participants,
// tasks, slices … as the source names them), finds each one's elements in
// the SVG, and marks them:
//
//   data-src-kind   node | edge | note | block | member | task | section |
//                   slice | period | event | commit | branch | point |
//                   quadrant | field | axis | curve | series | label
//   data-src-id     the id or name as written in the source (may be empty:
//                   a message or a note has none)
//   data-src-label  what the person reads on it
//   data-src-of     a member's class (as the source names it)
//   data-src-from, data-src-to   an edge's ends, as source ids
//   data-src-line   the 1-based source line that says it
//   data-src-key    one number per source element: its label and its line
//                   or shape are highlighted together
//
// Mermaid's databases keep no line numbers, so the line is found in the
// text: the statement that names the id (an edge: both ends, in order, with
// its label), ignoring %% comments and front matter. Where a type's
// database has nothing to name its elements by, the text the person clicked
// is looked up in the source instead (kind "label").

import { SourceText, domText, escapeRe, plain, tokenRe } from "./source-text.js";

// --- marking ------------------------------------------------------------------------

class Marker {
  constructor(svg) {
    this.svg = svg;
    this.key = 0;
  }

  /** Mark `elements` (nulls skipped) as one source element. */
  mark(elements, { kind, id = "", label = "", of, from, to, line }) {
    const els = elements.filter(Boolean);
    if (!els.length) return;
    const key = String(++this.key);
    for (const el of els) {
      const d = el.dataset;
      d.srcKind = kind;
      d.srcId = id ?? "";
      d.srcLabel = plain(label);
      if (of != null) d.srcOf = of;
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
    if (INTERNAL_ID.test(id)) continue;
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
      label: naming.edgeLabel?.(e) ?? plain(e.label), from: naming.shownEnd?.(from) ?? from, to: naming.shownEnd?.(to) ?? to,
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
  markSequenceBlocks(marker, src);
}

// A loop/alt/opt/par/critical/break frame is one <g data-et=control-structure>:
// its keyword (text.labelText), its "[condition]" (text.loopText), its border
// lines, and one text.sectionTitle per else/and/option. Its line is the n-th
// statement with that keyword and that text; a section's, the first one after
// its frame's. Mermaid draws "par_over" as "par".
const SECTION_KEYWORDS = { alt: "else", par: "and", critical: "option" };

function blockStatement(keyword) {
  return new RegExp(`^\\s*(?:${keyword === "par" ? "par(?:_over)?" : escapeRe(keyword)})(?![\\w-])\\s*(.*)$`);
}

function markSequenceBlocks(marker, src) {
  const bracketed = (el) => plain(domText(el).replace(/^\[|\]$/g, ""));
  const statements = (keyword, label, after = 0) => {
    const re = blockStatement(keyword);
    return src.all((l) => plain(re.exec(l)?.[1] ?? "\u0000") === label).filter((n) => n > after);
  };
  const seen = new Map();
  for (const frame of marker.svg.querySelectorAll("g[data-et=control-structure]")) {
    const keywordEl = frame.querySelector(":scope > text.labelText");
    const keyword = domText(keywordEl);
    if (!keyword) continue;
    const conditionEl = frame.querySelector(":scope > text.loopText");
    const label = conditionEl ? bracketed(conditionEl) : "";
    const n = seen.get(`${keyword}\n${label}`) ?? 0;
    seen.set(`${keyword}\n${label}`, n + 1);
    const lines = statements(keyword, label);
    const line = lines[Math.min(n, lines.length - 1)] ?? null;
    const frameEls = [...frame.querySelectorAll(":scope > line.loopLine, :scope > polygon.labelBox")];
    marker.mark([keywordEl, conditionEl, ...frameEls], { kind: "block", id: keyword, label, line });
    let after = line ?? 0;
    for (const title of frame.querySelectorAll(":scope > text.sectionTitle")) {
      const section = SECTION_KEYWORDS[keyword] ?? "else";
      const text = bracketed(title);
      const sectionLine = statements(section, text, after)[0] ?? null;
      if (sectionLine) after = sectionLine;
      marker.mark([title], { kind: "block", id: section, label: text, line: sectionLine });
    }
  }
  // a `rect <colour>` frame is a bare rect filled with its colour, drawn behind the messages
  const colour = (c) => String(c ?? "").replace(/\s+/g, "").toLowerCase();
  const rectLines = src.all((l) => /^\s*rect\s+\S/.test(l));
  const used = new Set();
  for (const rect of marker.svg.querySelectorAll("rect.rect")) {
    if (rect.closest("[data-src-kind]") || rect.dataset.srcKind) continue;
    const fill = colour(rect.getAttribute("fill"));
    const line = rectLines.find((n) => !used.has(n) && colour(src.code[n - 1].replace(/^\s*rect\s+/, "")) === fill);
    if (!line) continue;
    used.add(line);
    marker.mark([rect], { kind: "block", id: "rect", label: src.code[line - 1].trim().replace(/^rect\s+/, ""), line });
  }
}

// --- class members ------------------------------------------------------------------

/** Each attribute and method of a class (the g.label rows of its node's
 * members-group and methods-group, in the order of the class's members and
 * methods in the database) as kind "member" of that class. Its line: inside
 * the class's `{ … }` block, else a `Class : member` statement. */
function markClassMembers(marker, src, db) {
  const classes = db.getClasses?.() ?? db.classes ?? new Map();
  for (const [name, cls] of classes) {
    const node = marker.svg.querySelector(`g[data-src-kind=node][data-src-id="${CSS.escape(String(name))}"]`);
    if (!node) continue;
    const opens = new RegExp(`^\\s*class\\s+${escapeRe(name)}(?![\\w-]).*\\{`);
    const start = src.first((l) => opens.test(l));
    const end = start ? src.first((l) => /^\s*\}/.test(l) || /\}\s*$/.test(l), start) : null;
    const statement = new RegExp(`^\\s*${escapeRe(name)}\\s*:\\s*(.*)$`);
    // the database and the drawing both respell a member ("+sleep(hours) bool"
    // is drawn "+sleep(hours) : bool"): compare without spaces, colons, escapes
    const key = (text) => plain(text).replace(/[\\\s:]/g, "").replace(/[<>]/g, "~").replace(/[$*]$/, "");
    // → [line, the member as that line writes it]
    const find = (text) => {
      const want = key(text);
      if (!want) return null;
      for (let n = (start ?? 0) + 1; start && end && n < end; n++) {
        if (key(src.code[n - 1]) === want) return [n, src.code[n - 1].trim()];
      }
      for (const n of src.all((l) => statement.test(l))) {
        const written = statement.exec(src.code[n - 1])[1].trim();
        if (key(written) === want) return [n, written];
      }
      return null;
    };
    for (const [group, members] of [["members-group", cls.members], ["methods-group", cls.methods]]) {
      const rows = [...node.querySelectorAll(`:scope > g.${group} > g.label`)];
      rows.forEach((row, i) => {
        const shown = domText(row);
        const [line, written] = find(members?.[i]?.text) ?? find(shown) ?? [null, shown];
        marker.mark([row], { kind: "member", id: written, of: String(name), label: shown || written, line });
      });
    }
  }
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

// --- gitGraph -----------------------------------------------------------------------

// Every commit, merge and cherry-pick statement makes one commit, in order
// (seq). A commit without `id: "…"` gets a random id ("1-70a3a30") that
// changes with every parse, so it is found in the drawing by its seq prefix
// and named by its statement instead.
function markGitGraph(marker, src, db) {
  const svg = marker.svg;
  const commits = [...(db.getCommits?.() ?? new Map()).values()].sort((a, b) => a.seq - b.seq);
  const statements = src.all((l) => /^\s*(?:commit|merge|cherry-pick)(?![\w-])/.test(l));
  const isCommit = (id, seq) => (token) => token === id || token.startsWith(`${seq}-`);
  commits.forEach((commit, i) => {
    const line = statements[i] ?? null;
    const statement = line ? src.code[line - 1] : "";
    const written = /\bid\s*:\s*"([^"]*)"/.exec(statement)?.[1] ?? "";
    const same = isCommit(commit.id, commit.seq);
    const bullets = [...svg.querySelectorAll(".commit-bullets > *")]
      .filter((el) => [...el.classList].some(same));
    const labels = [...svg.querySelectorAll(".commit-labels text.commit-label")]
      .filter((t) => same(domText(t))).map((t) => t.parentElement);
    const tags = [...svg.querySelectorAll(".commit-labels text.tag-label")]
      .filter((t) => (commit.tags || []).includes(domText(t)))
      .flatMap((t) => [t, t.previousElementSibling, t.previousElementSibling?.previousElementSibling]
        .filter((el) => el && /tag-(label-bkg|hole)|tag-label/.test(el.getAttribute("class") || "")));
    marker.mark([...bullets, ...labels, ...tags], {
      kind: "commit", id: written, line,
      label: written || plain(commit.message) || plain(statement) || commit.id,
    });
  });
  for (const label of svg.querySelectorAll("g.branchLabel > g.label")) {
    const name = domText(label);
    if (!name) continue;
    const re = new RegExp(`^\\s*branch\\s+"?${escapeRe(name)}"?(?![\\w-])`);
    marker.mark([label], { kind: "branch", id: name, label: name, line: src.first((l) => re.test(l)) });
  }
}

// --- quadrantChart, sankey, architecture, C4, requirement ------------------------------

function markQuadrant(marker, src) {
  for (const point of marker.svg.querySelectorAll("g.data-point")) {
    const name = domText(point.querySelector("text"));
    if (!name) continue;
    const re = new RegExp(`^\\s*${escapeRe(name)}\\s*(?::::\\S+\\s*)?:`);
    marker.mark([point], { kind: "point", id: name, label: name, line: src.first((l) => re.test(l)) ?? src.textLine(name) });
  }
  for (const quadrant of marker.svg.querySelectorAll("g.quadrant")) {
    const text = domText(quadrant);
    const line = text && src.first((l) => /^\s*quadrant-[1-4]\b/.test(l) && plain(l).endsWith(plain(text)));
    if (!line) continue;
    const id = /quadrant-[1-4]/.exec(src.code[line - 1])[0];
    marker.mark([quadrant], { kind: "quadrant", id, label: text, line });
  }
}

// sankey: a CSV of source,target,value; its nodes and links are drawn in the
// order of the database's graph.
function markSankey(marker, src, db) {
  const graph = db.getGraph?.() ?? { nodes: [], links: [] };
  const field = (name) => `\\s*"?${escapeRe(name)}"?\\s*`;
  const nodes = [...marker.svg.querySelectorAll("g.node[id^='node-']")];
  const labels = [...marker.svg.querySelectorAll(".node-labels text")];
  // mermaid draws the links over the labels: a click on "Losses" would pick
  // the link that ends there. Labels on top (links are half transparent anyway).
  const labelGroup = labels[0]?.parentElement;
  labelGroup?.parentElement?.append(labelGroup);
  (graph.nodes || []).forEach((node, i) => {
    const name = String(node.id);
    const re = new RegExp(`^(?:${field(name)},|[^,]*,${field(name)},)`);
    marker.mark([nodes[i], labels[i]], { kind: "node", id: name, label: name, line: src.first((l) => re.test(l)) });
  });
  const links = [...marker.svg.querySelectorAll("g.link")];
  (graph.links || []).forEach((link, i) => {
    const from = String(link.source?.id ?? link.source);
    const to = String(link.target?.id ?? link.target);
    const re = new RegExp(`^${field(from)},${field(to)},`);
    marker.mark([links[i]], { kind: "edge", from, to, label: String(link.value ?? ""), line: src.first((l) => re.test(l)) });
  });
}

function markArchitecture(marker, src, db) {
  const statement = (word, id) => new RegExp(`^\\s*${word}\\s+${escapeRe(id)}(?![\\w-])`);
  for (const service of db.getServices?.() ?? []) {
    const el = marker.byDomId(`service-${service.id}`);
    marker.mark([el], { kind: "node", id: service.id, label: plain(service.title) || service.id,
      line: src.first((l) => statement("service", service.id).test(l)) });
  }
  for (const junction of db.getJunctions?.() ?? []) {
    marker.mark([marker.byDomId(`service-${junction.id}`)], { kind: "node", id: junction.id, label: junction.id,
      line: src.first((l) => statement("junction", junction.id).test(l)) });
  }
  for (const group of db.getGroups?.() ?? []) {
    const rect = marker.byDomId(`group-${group.id}`);
    const title = rect?.nextElementSibling?.matches("g") ? rect.nextElementSibling : null;
    marker.mark([rect, title], { kind: "node", id: group.id, label: plain(group.title) || group.id,
      line: src.first((l) => statement("group", group.id).test(l)) });
  }
}

function markC4(marker, src, db) {
  for (const shape of db.getC4ShapeArray?.() ?? []) {
    const el = marker.byDomId(shape.alias, "g");
    const name = plain(shape.label?.text ?? shape.alias);
    const re = new RegExp(`^\\s*\\w+\\s*\\(\\s*${escapeRe(shape.alias)}\\s*,`);
    marker.mark([el], { kind: "node", id: shape.alias, label: name, line: src.first((l) => re.test(l)) ?? src.idLine(shape.alias) });
  }
  // a relation is a <g> of a line and its text, drawn in the database's order
  const drawn = [...marker.svg.querySelectorAll("g:not([data-src-kind]) > line[marker-end]")].map((l) => l.parentElement);
  (db.getRels?.() ?? []).forEach((rel, i) => {
    const label = plain(rel.label?.text ?? "");
    const el = drawn.find((g) => !g.dataset.srcKind && domText(g.querySelector("text")) === label) ?? drawn[i];
    const re = new RegExp(`^\\s*\\w*Rel\\w*\\s*\\(\\s*${escapeRe(rel.from)}\\s*,\\s*${escapeRe(rel.to)}\\s*,`);
    marker.mark([el], { kind: "edge", from: rel.from, to: rel.to, label, line: src.first((l) => re.test(l)) });
  });
}

const REQUIREMENT_WORDS = "(?:requirement|functionalRequirement|interfaceRequirement|performanceRequirement|"
  + "physicalRequirement|designConstraint|element)";
const REQUIREMENT = (src) => ({
  name: (n) => String(n.id),
  label: (n) => String(n.id),
  line: (n, id) => src.idLine(id, new RegExp(`^\\s*${REQUIREMENT_WORDS}\\s+"?${escapeRe(id)}"?(?![\\w-])`)),
  // drawn "<<satisfies>>", written `a - satisfies -> b`
  edgeLabel: (e) => plain(e.label).replace(/^<<|>>$/g, ""),
  edgeLine: (e) => src.edgeLine(String(e.start), String(e.end), plain(e.label).replace(/^<<|>>$/g, "")),
});

// --- charts drawn from a few statements: xychart, radar, packet, treemap -------------

// one g.bar-plot-N / g.line-plot-N per `bar [...]` / `line [...]` statement,
// numbered across both kinds in the source's order
function markXyChart(marker, src) {
  const statements = src.all((l) => /^\s*(?:bar|line)\b/.test(l));
  for (const plot of marker.svg.querySelectorAll("g[class^='bar-plot-'], g[class^='line-plot-']")) {
    const [, word, n] = /^(bar|line)-plot-(\d+)/.exec(plot.getAttribute("class")) ?? [];
    const line = statements[Number(n)];
    if (!line || !new RegExp(`^\\s*${word}\\b`).test(src.code[line - 1])) continue;
    const title = /^\s*\w+\s+"([^"]*)"/.exec(src.code[line - 1])?.[1] ?? "";
    const values = /\[[^\]]*\]/.exec(src.code[line - 1])?.[0] ?? "";
    marker.mark([...plot.children], { kind: "series", id: title || word, label: title || values, line });
  }
}

function markRadar(marker, src, db) {
  const axisLine = (name) => src.first((l) => /^\s*axis\b/.test(l) && tokenRe(name).test(l));
  for (const text of marker.svg.querySelectorAll("text.radarAxisLabel")) {
    const shown = domText(text);
    const axis = (db.getAxes?.() ?? []).find((a) => plain(a.label) === shown || a.name === shown);
    const id = axis?.name ?? shown;
    marker.mark([text], { kind: "axis", id, label: shown, line: axisLine(id) });
  }
  const curveLine = (name) => src.first((l) => new RegExp(`^\\s*curve\\s+${escapeRe(name)}(?![\\w-])`).test(l)
    || (/^\s*curve\b/.test(l) && tokenRe(name).test(l)));
  (db.getCurves?.() ?? []).forEach((curve, i) => {
    const legend = marker.svg.querySelector(`rect.radarLegendBox-${i}`)?.parentElement;
    const shape = marker.svg.querySelector(`.radarCurve-${i}`);
    marker.mark([shape, legend], { kind: "curve", id: curve.name, label: plain(curve.label) || curve.name,
      line: curveLine(curve.name) });
  });
}

function markPacket(marker, src) {
  for (const label of marker.svg.querySelectorAll("text.packetLabel")) {
    const name = domText(label);
    if (!name) continue;
    const els = [label];
    let block = label.previousElementSibling;
    if (block?.matches("rect")) els.push(block);
    for (let n = label.nextElementSibling; n?.matches("text.packetByte"); n = n.nextElementSibling) els.push(n);
    const re = new RegExp(`:\\s*"${escapeRe(name)}"`);
    marker.mark(els, { kind: "field", id: name, label: name, line: src.first((l) => re.test(l)) ?? src.textLine(name) });
  }
}

function markTreemap(marker, src) {
  for (const g of marker.svg.querySelectorAll("g.treemapSection, g.treemapNode")) {
    const name = domText(g.querySelector("text.treemapSectionLabel, text.treemapLabel"));
    if (!name) continue;
    const re = new RegExp(`^\\s*"${escapeRe(name)}"\\s*(?::|$)`);
    marker.mark([g], { kind: "node", id: name, label: name, line: src.first((l) => re.test(l)) ?? src.textLine(name) });
  }
}

// --- any other text: the source line that says it ------------------------------------------

const NUMBER_ONLY = /^[-+\d.,%\s]+$/;

/** Every text still unmarked that the source writes somewhere (a title, an
 * axis, a label of a type mapped no better) as kind "label", with its
 * line; an axis' tick numbers and other text mermaid made up stay unmarked.
 * The mark covers the text's group when the group holds no other text. */
function markLabels(marker, src) {
  const svg = marker.svg;
  for (const el of svg.querySelectorAll("text, foreignObject")) {
    if (el.closest("[data-src-kind]") || el.parentElement?.closest("foreignObject")) continue;
    const text = domText(el);
    if (!text || NUMBER_ONLY.test(text)) continue;
    const firstRow = domText(el.querySelector("tspan, p, span")) || text;
    // a title is said by the title statement, anything else by another
    const isTitle = Boolean(el.closest("[class*=title i]"));
    const preferred = isTitle ? /^\s*title\b/ : /^(?!\s*(?:title|accTitle|accDescr)\b)/;
    const quoted = (t) => src.first((l) => l.includes(`"${t}"`));
    const line = quoted(text) ?? src.textLine(text, preferred)
      ?? (firstRow !== text ? quoted(firstRow) ?? src.textLine(firstRow, preferred) : null);
    if (!line) continue;
    let target = el;
    for (let up = 0; up < 3; up++) {
      const parent = target.parentElement;
      if (!parent || parent === svg || parent.parentElement === svg || !parent.matches("g")) break;
      if (parent.querySelectorAll("text, foreignObject").length !== 1 || parent.querySelector("[data-src-kind]")) break;
      target = parent;
    }
    marker.mark([target], { kind: "label", id: text, label: text, line });
  }
}

// --- any other type: what the SVG says, lines by label ------------------------------------

const NODE_ID_PREFIXES = /^(?:flowchart|entity|classId|state|id)-/;
// a group mermaid makes up ("__swimlane_default__"): the source says nothing of it
const INTERNAL_ID = /^__.*__$/;

function markFromSvg(marker, src) {
  const svg = marker.svg;
  // g.cluster: a kanban column, a block diagram's group (a flowchart's subgraph is marked already)
  for (const node of svg.querySelectorAll("g.node, g.cluster")) {
    if (node.dataset.srcKind || node.closest("[data-src-kind]")) continue;
    let id = node.getAttribute("data-id") || node.id || "";
    if (id.startsWith(svg.id + "-")) id = id.slice(svg.id.length + 1);
    id = id.replace(NODE_ID_PREFIXES, "").replace(/-\d+$/, "");
    if (INTERNAL_ID.test(id)) continue;
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
    if (db && /^(flowchart|graph|swimlane)/.test(type)) markGraph(marker, src, db.getData(), FLOWCHART(src));
    else if (db && /^class/.test(type)) {
      markGraph(marker, src, db.getData(), CLASS(src));
      markClassMembers(marker, src, db);
    }
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
    else if (db && type === "gitGraph") markGitGraph(marker, src, db);
    else if (type === "quadrantChart") markQuadrant(marker, src);
    else if (db && type === "sankey") markSankey(marker, src, db);
    else if (db && type === "architecture") markArchitecture(marker, src, db);
    else if (db && type === "c4") markC4(marker, src, db);
    else if (db && type === "requirement") markGraph(marker, src, db.getData(), REQUIREMENT(src));
    else if (type === "xychart") markXyChart(marker, src);
    else if (db && type === "radar") markRadar(marker, src, db);
    else if (type === "packet") markPacket(marker, src);
    else if (type === "treemap") markTreemap(marker, src);
  } catch (e) {
    console.debug("diagram: source map incomplete", e); // a mermaid internal changed shape
  }
  try {
    markFromSvg(marker, src);
    markLabels(marker, src);
  } catch (e) {
    console.debug("diagram: source map incomplete", e);
  }
}
