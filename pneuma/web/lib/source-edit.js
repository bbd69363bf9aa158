// Source-edit helpers for viewers that edit in place (docs/viewer-contract.md,
// "Edit in place"; docs/mode-authors.md, "Editing with source-edit.js").
// A viewer maps what the person changed on screen back to the bytes of the
// source, so that an edit changes only that text and every other byte of
// the file stays as it was. Pure functions (no DOM): tests/js/source-edit.test.mjs.
// Import as `/static/lib/source-edit.js`.

// --- SHA-256 --------------------------------------------------------------

/** The lowercase hex SHA-256 of `text`'s UTF-8 bytes (what POST /api/edits
 *  calls base_sha256). Web Crypto where the page has it, else our own. */
export async function sha256Hex(text) {
  const bytes = new TextEncoder().encode(text);
  const subtle = globalThis.crypto && globalThis.crypto.subtle;
  if (subtle) {
    try {
      return toHex(new Uint8Array(await subtle.digest('SHA-256', bytes)));
    } catch {
      // A context without Web Crypto (not secure): the plain version below.
    }
  }
  return toHex(sha256Bytes(bytes));
}

function toHex(bytes) {
  return Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('');
}

const K = new Uint32Array([
  0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
  0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
  0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
  0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
  0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
  0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
  0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
  0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
]);

/** FIPS 180-4 SHA-256 of a Uint8Array (the fallback of sha256Hex). */
export function sha256Bytes(bytes) {
  const bitLength = bytes.length * 8;
  const padded = new Uint8Array(((bytes.length + 9 + 63) >> 6) << 6);
  padded.set(bytes);
  padded[bytes.length] = 0x80;
  const view = new DataView(padded.buffer);
  view.setUint32(padded.length - 8, Math.floor(bitLength / 2 ** 32));
  view.setUint32(padded.length - 4, bitLength >>> 0);
  const h = new Uint32Array([0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
    0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19]);
  const w = new Uint32Array(64);
  const rotr = (x, n) => (x >>> n) | (x << (32 - n));
  for (let block = 0; block < padded.length; block += 64) {
    for (let i = 0; i < 16; i += 1) w[i] = view.getUint32(block + i * 4);
    for (let i = 16; i < 64; i += 1) {
      const s0 = rotr(w[i - 15], 7) ^ rotr(w[i - 15], 18) ^ (w[i - 15] >>> 3);
      const s1 = rotr(w[i - 2], 17) ^ rotr(w[i - 2], 19) ^ (w[i - 2] >>> 10);
      w[i] = w[i - 16] + s0 + w[i - 7] + s1;
    }
    let [a, b, c, d, e, f, g, hh] = h;
    for (let i = 0; i < 64; i += 1) {
      const t1 = (hh + (rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25)) + ((e & f) ^ (~e & g)) + K[i] + w[i]) >>> 0;
      const t2 = ((rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22)) + ((a & b) ^ (a & c) ^ (b & c))) >>> 0;
      hh = g; g = f; f = e; e = (d + t1) >>> 0; d = c; c = b; b = a; a = (t1 + t2) >>> 0;
    }
    const add = [a, b, c, d, e, f, g, hh];
    for (let i = 0; i < 8; i += 1) h[i] = (h[i] + add[i]) >>> 0;
  }
  const out = new Uint8Array(32);
  const outView = new DataView(out.buffer);
  for (let i = 0; i < 8; i += 1) outView.setUint32(i * 4, h[i]);
  return out;
}

// --- HTML text nodes --------------------------------------------------------

// Elements whose content is not the page's text (raw text in HTML's terms).
const RAW_TEXT = new Set(['script', 'style']);
// Elements that never have content: no end tag to wait for.
const VOID = new Set(['area', 'base', 'br', 'col', 'embed', 'hr', 'img', 'input', 'link', 'meta',
  'param', 'source', 'track', 'wbr']);
const NAMED = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'", nbsp: '\u00a0', copy: '©',
  reg: '®', trade: '™', mdash: '—', ndash: '–', hellip: '…', lsquo: '‘', rsquo: '’',
  ldquo: '“', rdquo: '”', laquo: '«', raquo: '»', middot: '·', bull: '•', euro: '€',
  times: '×', divide: '÷', deg: '°', shy: '\u00ad', ensp: '\u2002', emsp: '\u2003', thinsp: '\u2009' };

/** The text of an HTML text run with its character references decoded
 *  (numeric ones, and the common named ones; others stay as written). */
export function decodeHtmlText(raw) {
  return raw.replace(/&(#[xX][0-9a-fA-F]{1,6}|#[0-9]{1,7}|[A-Za-z][A-Za-z0-9]{1,31});/g, (whole, ref) => {
    if (ref[0] === '#') {
      const code = ref[1] === 'x' || ref[1] === 'X' ? parseInt(ref.slice(2), 16) : parseInt(ref.slice(1), 10);
      return code > 0 && code <= 0x10ffff && !(code >= 0xd800 && code <= 0xdfff) ? String.fromCodePoint(code) : '\ufffd';
    }
    return Object.prototype.hasOwnProperty.call(NAMED, ref) ? NAMED[ref] : whole;
  });
}

/** Text as HTML text content: `&`, `<`, `>` escaped, a no-break space
 *  written as `&nbsp;` (so it stays visible in the source). */
export function escapeHtmlText(text) {
  return String(text).replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;')
    .replace(/\u00a0/g, '&nbsp;');
}

// Where a tag that starts at `at` ends (the index after its `>`): a `>` inside
// a quoted attribute value (a quote right after `=`) does not end it.
function tagEnd(source, at) {
  let quote = null;
  let previous = '';
  for (let i = at; i < source.length; i += 1) {
    const c = source[i];
    if (quote) {
      if (c === quote) quote = null;
    } else if ((c === '"' || c === "'") && previous === '=') {
      quote = c;
    } else if (c === '>') {
      return i + 1;
    }
    if (!/\s/.test(c)) previous = c;
  }
  return source.length;
}

// What HTML's tree builder does with a tag decides where text nodes begin
// and end: a tag it drops (an end tag with nothing open to close, a second
// <body>) leaves the text on both sides as one DOM node, and some start tags
// close open elements first (<li> closes an open <li>, <div> an open <p>).
// The rules below are the specification's for those cases (its "in body"
// insertion mode), enough for the pages people and agents write; tables,
// forms and the adoption agency's re-parenting of misnested formatting
// elements are approximated.
const HEADINGS = new Set(['h1', 'h2', 'h3', 'h4', 'h5', 'h6']);
// Start tags that close an open <p> ("close a p element").
const CLOSES_P = new Set(['address', 'article', 'aside', 'blockquote', 'center', 'details', 'dialog', 'dir',
  'div', 'dl', 'fieldset', 'figcaption', 'figure', 'footer', 'header', 'hgroup', 'main', 'menu', 'nav', 'ol',
  'p', 'search', 'section', 'summary', 'ul', 'pre', 'listing', 'form', 'table', 'hr', 'li', 'dd', 'dt',
  'plaintext', 'xmp', ...HEADINGS]);
// End tags closed only when an element of that name is in scope, and dropped otherwise.
const SCOPED_END = new Set(['address', 'article', 'aside', 'blockquote', 'button', 'center', 'details',
  'dialog', 'dir', 'div', 'dl', 'fieldset', 'figcaption', 'figure', 'footer', 'header', 'hgroup', 'listing',
  'main', 'menu', 'nav', 'ol', 'pre', 'search', 'section', 'summary', 'ul', 'form', 'applet', 'marquee',
  'object', 'dd', 'dt']);
const SCOPE_LIMIT = new Set(['applet', 'caption', 'html', 'table', 'td', 'th', 'marquee', 'object', 'template']);
const SPECIAL = new Set([...SCOPED_END, ...HEADINGS, ...SCOPE_LIMIT, 'area', 'base', 'basefont', 'bgsound',
  'body', 'br', 'col', 'colgroup', 'embed', 'frame', 'frameset', 'head', 'hr', 'iframe', 'img', 'input',
  'keygen', 'li', 'link', 'meta', 'noembed', 'noframes', 'noscript', 'p', 'param', 'plaintext', 'script',
  'select', 'source', 'style', 'tbody', 'textarea', 'tfoot', 'thead', 'title', 'tr', 'track', 'wbr', 'xmp']);
const FORMATTING = new Set(['a', 'b', 'big', 'code', 'em', 'font', 'i', 'nobr', 's', 'small', 'strike',
  'strong', 'tt', 'u']);
// Elements whose content is one text run with no tags (RCDATA: references are decoded).
const RCDATA = new Set(['title', 'textarea']);

// The open elements and the formatting elements to reopen, as the tree
// builder keeps them: elements are `{name}` objects so that an element in
// both lists is recognisably the same one.
class OpenElements {
  constructor() {
    this.open = [];
    this.formatting = []; // "the list of active formatting elements" (no markers)
  }

  names() {
    return this.open.map((element) => element.name);
  }

  has(name) {
    return this.open.some((element) => element.name === name);
  }

  current() {
    return this.open.length ? this.open[this.open.length - 1].name : '';
  }

  // Where an element `match` accepts is in scope (the last one), or -1.
  inScope(match, extraLimits = []) {
    for (let at = this.open.length - 1; at >= 0; at -= 1) {
      const name = this.open[at].name;
      if (match(name)) return at;
      if (SCOPE_LIMIT.has(name) || extraLimits.includes(name)) return -1;
    }
    return -1;
  }

  push(name) {
    const element = { name };
    this.open.push(element);
    if (FORMATTING.has(name)) this.formatting.push(element);
  }

  popTo(length) {
    this.open.length = Math.max(0, length);
  }

  // Formatting elements an implied close took off the stack open again
  // around what comes next ("reconstruct the active formatting elements").
  // True when it opened any: an element was inserted, so text splits.
  reopen() {
    let from = this.formatting.length;
    while (from > 0 && !this.open.includes(this.formatting[from - 1])) from -= 1;
    if (from === this.formatting.length) return false;
    for (let at = from; at < this.formatting.length; at += 1) {
      const clone = { name: this.formatting[at].name };
      this.formatting[at] = clone;
      this.open.push(clone);
    }
    return true;
  }

  // An end tag of a formatting element ("the adoption agency algorithm",
  // approximated: the elements end up closed as it closes them, not
  // re-parented as it re-parents them). False when the tag is dropped.
  endFormatting(name) {
    let entry = -1;
    for (let at = this.formatting.length - 1; at >= 0; at -= 1) {
      if (this.formatting[at].name === name) { entry = at; break; }
    }
    if (entry < 0) return this.endOther(name);
    const element = this.formatting[entry];
    const at = this.open.indexOf(element);
    if (at < 0) {
      this.formatting.splice(entry, 1);
      return false;
    }
    if (this.inScope((n) => n === name) < 0 || this.inScope(() => false) >= 0) return false;
    if (this.open.slice(at + 1).some((e) => e.name !== name && SCOPE_LIMIT.has(e.name))) return false;
    this.formatting.splice(entry, 1);
    let lastBlock = -1;
    for (let below = at + 1; below < this.open.length; below += 1) {
      if (SPECIAL.has(this.open[below].name)) lastBlock = below;
    }
    if (lastBlock < 0) {
      this.popTo(at);
    } else {
      const kept = this.open.slice(at + 1, lastBlock + 1)
        .filter((e) => SPECIAL.has(e.name) || this.formatting.includes(e));
      this.open = [...this.open.slice(0, at), ...kept];
    }
    return true;
  }

  // "Any other end tag": closes the nearest open element of that name
  // unless a special element comes first. False when the tag is dropped.
  endOther(name) {
    for (let at = this.open.length - 1; at >= 0; at -= 1) {
      if (this.open[at].name === name) {
        this.popTo(at);
        return true;
      }
      if (SPECIAL.has(this.open[at].name)) return false;
    }
    return false;
  }

  // What a start tag closes before it opens.
  closeForStart(name) {
    if (CLOSES_P.has(name)) {
      const p = this.inScope((n) => n === 'p', ['button']);
      if (p >= 0) this.popTo(p);
    }
    if (name === 'li' || name === 'dd' || name === 'dt') {
      const same = name === 'li' ? ['li'] : ['dd', 'dt'];
      for (let at = this.open.length - 1; at >= 0; at -= 1) {
        const open = this.open[at].name;
        if (same.includes(open)) { this.popTo(at); break; }
        if (SPECIAL.has(open) && !['address', 'div', 'p'].includes(open)) break;
      }
    }
    if (HEADINGS.has(name) && HEADINGS.has(this.current())) this.popTo(this.open.length - 1);
    if (name === 'a') {
      const a = this.formatting.findLast((element) => element.name === 'a');
      if (a) {
        this.endFormatting('a');
        const left = this.open.indexOf(a);
        if (left >= 0) this.open.splice(left, 1);
        const listed = this.formatting.indexOf(a);
        if (listed >= 0) this.formatting.splice(listed, 1);
      }
    }
  }

  // What an end tag does. False when the tree builder drops it (the text
  // around it stays one node).
  end(name) {
    if (name === 'body' || name === 'html') return false;
    if (name === 'br') return true; // </br> is read as <br>
    if (name === 'p') {
      const p = this.inScope((n) => n === 'p', ['button']);
      if (p >= 0) this.popTo(p);
      return true; // a lone </p> makes an empty <p>: a new node either way
    }
    let at = -2;
    if (name === 'li') at = this.inScope((n) => n === 'li', ['ol', 'ul']);
    else if (HEADINGS.has(name)) at = this.inScope((n) => HEADINGS.has(n));
    else if (SCOPED_END.has(name)) at = this.inScope((n) => n === name);
    else if (FORMATTING.has(name)) return this.endFormatting(name);
    else return this.endOther(name);
    if (at < 0) return false;
    this.popTo(at);
    return true;
  }
}

// Tags that may come before the body begins.
const HEAD_CONTENT = new Set(['html', 'head', 'body', 'base', 'link', 'meta', 'title', 'style', 'script',
  'noscript', 'template']);

// Start tags after which the tree builder reopens formatting elements
// (the others close a <p> and open a block, or are raw text).
const NO_REOPEN = new Set([...CLOSES_P, 'html', 'body', 'head', 'script', 'style', 'title', 'textarea']);

/**
 * The text nodes of an HTML source, in document order:
 * `[{index, start, end, raw, text, parents}]`, where `source.slice(start, end)`
 * is `raw`, `text` is the node's text (its references decoded; a tag the
 * parser drops inside `raw` is not part of it), and `parents` the names of
 * the open elements around it (outermost first). Script and style content,
 * comments, doctypes and whitespace-only runs are skipped. A viewer finds the
 * n-th non-blank text node of its rendered page (same filter) at index n;
 * comparing `text` with the node's own text tells it the two agree.
 */
export function htmlTextNodes(source) {
  const nodes = [];
  const tree = new OpenElements();
  // The pieces of the text node being read: [start, end) runs of source.
  let pieces = [];
  let parents = [];
  let textStart = 0;
  let i = 0;
  // Whether the body has begun (implied by text or a tag that belongs in it,
  // when the source has no <body>).
  let inBody = false;
  const keep = (end) => {
    if (end <= textStart) return;
    if (/\S/.test(source.slice(textStart, end))) inBody = true;
    if (!pieces.length) {
      tree.reopen();
      parents = tree.names();
    }
    pieces.push([textStart, end]);
    textStart = end;
  };
  const flush = (end) => {
    keep(end);
    if (pieces.length) {
      const start = pieces[0][0];
      const last = pieces[pieces.length - 1][1];
      const text = pieces.map(([from, to]) => decodeHtmlText(source.slice(from, to))).join('');
      // Blank as a DOM walker sees it: a run of &nbsp; is blank too.
      if (/\S/.test(text)) nodes.push({ index: nodes.length, start, end: last, raw: source.slice(start, last), text, parents });
    }
    pieces = [];
  };
  const skipTo = (after) => {
    textStart = after;
    i = after;
  };
  while (i < source.length) {
    const lt = source.indexOf('<', i);
    if (lt < 0) break;
    const next = source[lt + 1] || '';
    let after = -1;
    if (source.startsWith('<!--', lt)) {
      const close = source.indexOf('-->', lt + 4);
      after = close < 0 ? source.length : close + 3;
    } else if (next === '!' || next === '?') {
      after = tagEnd(source, lt);
    } else if (/[A-Za-z]/.test(next)) {
      after = tagEnd(source, lt);
      const name = /^<([A-Za-z][^\s/>]*)/.exec(source.slice(lt, after))[1].toLowerCase();
      const selfClosing = source[after - 2] === '/';
      if ((name === 'html' || name === 'body' || name === 'head') && (tree.has(name) || inBody)) {
        keep(lt); // a second <html> or <body> only adds attributes; a late <head> is dropped
        skipTo(after);
        continue;
      }
      if (!HEAD_CONTENT.has(name)) inBody = true;
      flush(lt);
      tree.closeForStart(name);
      if (!NO_REOPEN.has(name)) tree.reopen();
      if (RAW_TEXT.has(name) || RCDATA.has(name)) {
        const closing = new RegExp(`</${name}[\\s/>]`, 'i');
        const found = closing.exec(source.slice(after));
        const contentEnd = found ? after + found.index : source.length;
        const raw = source.slice(after, contentEnd);
        const text = decodeHtmlText(raw);
        if (RCDATA.has(name) && /\S/.test(text)) {
          nodes.push({ index: nodes.length, start: after, end: contentEnd, raw, text, parents: [...tree.names(), name] });
        }
        skipTo(found ? tagEnd(source, contentEnd) : source.length);
        continue;
      }
      if (!VOID.has(name) && !selfClosing) tree.push(name);
      skipTo(after);
      continue;
    } else if (next === '/' && /[A-Za-z]/.test(source[lt + 2] || '')) {
      after = tagEnd(source, lt);
      const name = /^<\/([A-Za-z][^\s/>]*)/.exec(source.slice(lt, after))[1].toLowerCase();
      keep(lt); // the text before the tag is in place before the tag is read
      if (tree.end(name)) flush(lt); // else dropped: the text goes on after it
      skipTo(after);
      continue;
    }
    if (after < 0) {
      i = lt + 1; // a `<` that starts no tag is text
      continue;
    }
    flush(lt);
    skipTo(after);
  }
  flush(source.length);
  return nodes;
}

/**
 * `source` with the text node at `index` (htmlTextNodes) replaced by
 * `newText`, escaped; the node's own leading and trailing whitespace is
 * kept, so the markup's layout does not move. Nothing else changes. Text
 * equal to the node's (decoded) text gives `source` back unchanged.
 */
export function replaceHtmlText(source, index, newText) {
  const node = htmlTextNodes(source)[index];
  if (!node) throw new RangeError(`no text node ${index} in this source`);
  const lead = /^\s*/.exec(node.raw)[0];
  const trail = /\s*$/.exec(node.raw.slice(lead.length))[0];
  const wanted = String(newText).trim();
  if (wanted === node.text.trim()) return source;
  return source.slice(0, node.start + lead.length) + escapeHtmlText(wanted)
    + source.slice(node.end - trail.length);
}

// --- Markdown blocks --------------------------------------------------------

// What comes before a block's text on its first line: indentation, block
// quote markers, list markers (and a task box), in any nesting.
const LEAD = /^(?:[ \t]*>[ \t]?|[ \t]*(?:[-*+]|\d{1,9}[.)])(?:[ \t]+(?:\[[ xX]\][ \t]+)?|(?=\r?$)))*[ \t]*/;
const ATX_OPEN = /^#{1,6}(?:[ \t]+|(?=\r?$))/;
const ATX_CLOSE = /(?:^|[ \t]+)#+[ \t]*$/;
const SETEXT_UNDERLINE = /^(?:[ \t]*>[ \t]?)*[ \t]{0,3}(?:=+|-+)[ \t]*$/;

/**
 * The inline text of the Markdown block on lines [lineStart, lineEnd)
 * (0-based, end exclusive: markdown-it's `token.map`), as offsets into
 * `source`: `{start, end, text}` with `text === source.slice(start, end)`.
 * A heading's `#`s (and closing `#`s) or setext underline, a list item's
 * marker, a block quote's `>` and the indentation of its first line are
 * outside; lines after the first are taken whole (their prefixes are part
 * of the raw text). Null for an empty or out-of-range block.
 */
export function markdownInlineRange(source, lineStart, lineEnd) {
  const starts = [0];
  for (let i = source.indexOf('\n'); i >= 0; i = source.indexOf('\n', i + 1)) starts.push(i + 1);
  if (!(lineStart >= 0 && lineEnd > lineStart && lineStart < starts.length)) return null;
  const lineText = (n) => {
    const from = starts[n];
    const to = n + 1 < starts.length ? starts[n + 1] - 1 : source.length;
    return { from, to: source[to - 1] === '\r' ? to - 1 : to };
  };
  let last = Math.min(lineEnd, starts.length) - 1;
  // A setext heading: its underline is not its text.
  if (last > lineStart) {
    const under = lineText(last);
    if (SETEXT_UNDERLINE.test(source.slice(under.from, under.to))) last -= 1;
  }
  // Trailing blank lines inside the map are not text either.
  while (last > lineStart) {
    const line = lineText(last);
    if (/\S/.test(source.slice(line.from, line.to))) break;
    last -= 1;
  }
  const first = lineText(lineStart);
  const firstText = source.slice(first.from, first.to);
  let start = first.from + LEAD.exec(firstText)[0].length;
  let end = lineText(last).to;
  const atx = ATX_OPEN.exec(source.slice(start, first.to));
  if (atx) {
    start += atx[0].length;
    if (last === lineStart) {
      const close = ATX_CLOSE.exec(source.slice(start, end));
      if (close) end = start + close.index;
    }
  }
  end = Math.max(start, end - /[ \t]*$/.exec(source.slice(start, end))[0].length);
  if (start > end) return null;
  return { start, end, text: source.slice(start, end) };
}

// Tags whose content is not text a person edits where it is drawn.
const NOT_EDITABLE_TEXT = new Set(['script', 'style', 'template', 'noscript', 'textarea', 'title']);

/** The element's one text node when it holds nothing else (comments aside), else null. */
export function soleTextNode(el) {
  if (!el || el.nodeType !== 1 || NOT_EDITABLE_TEXT.has(el.localName)) return null;
  let found = null;
  for (const node of el.childNodes) {
    if (node.nodeType === 8) continue;
    if (node.nodeType !== 3 || found) return null;
    found = node;
  }
  return found && found.nodeValue.trim() ? found : null;
}

/**
 * Where a drawn text `node` stands among its document's text nodes, with
 * htmlTextNodes' filter (whitespace-only text and script and style content
 * do not count), so the same index names it in the source; -1 if absent.
 */
export function renderedTextNodeIndex(doc, node) {
  const walker = doc.createTreeWalker(doc.body, 4 /* SHOW_TEXT */);
  let index = 0;
  for (let current = walker.nextNode(); current; current = walker.nextNode()) {
    if (!current.nodeValue.trim()) continue;
    if (current.parentElement && current.parentElement.closest('script, style')) continue;
    if (current === node) return index;
    index += 1;
  }
  return -1;
}
