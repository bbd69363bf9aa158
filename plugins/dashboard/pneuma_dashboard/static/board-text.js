// Edits of dashboard.json made in the page, as targeted text edits: a tile
// moved or resized changes only its four numbers, a retitled tile only its
// title string; every other byte of the file (the agent's formatting, key
// order, other tiles) stays as it was (docs/dashboard.md, "Layout edits").
//
// A small JSON reader that remembers where each value starts and ends in
// the text; `JSON.parse` is still the judge of validity.

class Reader {
  constructor(text) {
    this.text = text;
    this.pos = 0;
  }

  skip() {
    while (this.pos < this.text.length && " \t\r\n".includes(this.text[this.pos])) this.pos += 1;
  }

  value() {
    this.skip();
    const start = this.pos;
    const c = this.text[this.pos];
    if (c === "{") return this.object(start);
    if (c === "[") return this.array(start);
    if (c === '"') {
      this.string();
      return { kind: "string", start, end: this.pos };
    }
    const m = /^(-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?|true|false|null)/.exec(this.text.slice(this.pos, this.pos + 64));
    if (!m) throw new Error(`unexpected character at offset ${this.pos}`);
    this.pos += m[0].length;
    return { kind: "scalar", start, end: this.pos };
  }

  string() {
    this.pos += 1; // the opening quote
    while (this.pos < this.text.length) {
      const c = this.text[this.pos];
      if (c === "\\") this.pos += 2;
      else if (c === '"') {
        this.pos += 1;
        return;
      } else this.pos += 1;
    }
    throw new Error("unterminated string");
  }

  object(start) {
    const members = new Map();
    this.pos += 1;
    this.skip();
    if (this.text[this.pos] === "}") {
      this.pos += 1;
      return { kind: "object", start, end: this.pos, members };
    }
    for (;;) {
      this.skip();
      const keyStart = this.pos;
      this.string();
      const key = JSON.parse(this.text.slice(keyStart, this.pos));
      this.skip();
      this.pos += 1; // the colon
      members.set(key, this.value());
      this.skip();
      const c = this.text[this.pos++];
      if (c === "}") return { kind: "object", start, end: this.pos, members };
      if (c !== ",") throw new Error(`expected , or } at offset ${this.pos - 1}`);
    }
  }

  array(start) {
    const items = [];
    this.pos += 1;
    this.skip();
    if (this.text[this.pos] === "]") {
      this.pos += 1;
      return { kind: "array", start, end: this.pos, items };
    }
    for (;;) {
      items.push(this.value());
      this.skip();
      const c = this.text[this.pos++];
      if (c === "]") return { kind: "array", start, end: this.pos, items };
      if (c !== ",") throw new Error(`expected , or ] at offset ${this.pos - 1}`);
    }
  }
}

/** The span tree of a JSON text (throws on text JSON.parse refuses). */
export function parseSpans(text) {
  JSON.parse(text);
  return new Reader(text).value();
}

/** The span node of the tile whose "id" is `id`, or null. */
function tileNode(text, root, id) {
  const tiles = root.kind === "object" ? root.members.get("tiles") : null;
  if (!tiles || tiles.kind !== "array") return null;
  return tiles.items.find((item) => {
    const idNode = item.kind === "object" ? item.members.get("id") : null;
    return idNode?.kind === "string" && JSON.parse(text.slice(idNode.start, idNode.end)) === id;
  }) || null;
}

/** `text` with the values of `changes` ({key: JSON value}) written into the
 * tile `id`; each key must already be in the tile. Replacements are made
 * from the end so earlier offsets stay right. */
export function editTile(text, id, changes) {
  const root = parseSpans(text);
  const tile = tileNode(text, root, id);
  if (!tile) throw new Error(`no tile with id "${id}" in dashboard.json`);
  const spans = Object.entries(changes).map(([key, value]) => {
    const node = tile.members.get(key);
    if (!node) throw new Error(`tile "${id}" has no "${key}" to change`);
    return { node, json: JSON.stringify(value) };
  }).sort((a, b) => b.node.start - a.node.start);
  let out = text;
  for (const { node, json } of spans) out = out.slice(0, node.start) + json + out.slice(node.end);
  return out;
}

/** `text` with tile `id` at `box` ({x, y, w, h}): only those numbers change. */
export function moveTile(text, id, box) {
  const { x, y, w, h } = box;
  return editTile(text, id, { x, y, w, h });
}
