// The .mmd source as source-map.js reads it: the code lines without %%
// comments and front matter, the statements that name an id or say a text,
// and the text helpers (an id as a token, mermaid's label markup stripped).

const LETTER = "[\\p{L}\\p{N}_]";

export function escapeRe(s) {
  return String(s).replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

/** `id` as a whole token: "A" in "A-->B" and "A[x]", not in "AB" or "A-b". */
export function tokenRe(id) {
  return new RegExp(`(?<!${LETTER})${escapeRe(id)}(?!${LETTER}|-${LETTER})`, "u");
}

// the markup a label may hold; any other "<" is text ("<<satisfies>>", "a < b")
const TAG = /<\/?(?:a|b|big|code|del|div|em|font|i|ins|p|s|small|span|strong|sub|sup|u)\b[^<>]*>/gi;

/** Label text as it can be compared with a source line: no tags, no quotes
 * or markdown backticks, one space between words; the same when applied twice. */
export function plain(s) {
  return String(s ?? "").replace(/<br\s*\/?>/gi, " ").replace(TAG, "")
    .replace(/&lt;/g, "<").replace(/&gt;/g, ">").replace(/&quot;/g, '"').replace(/&amp;/g, "&")
    .replace(/[`"]/g, "").replace(/\\n/g, " ").replace(/\s+/g, " ").trim();
}

export function domText(el) {
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
    // every text of a type mapped by label asks: plain each line once
    this.plainCode ??= this.code.map((l) => plain(l));
    const says = (n) => this.plainCode[n - 1].includes(want);
    return (preferred && this.all((l) => preferred.test(l)).find(says)) ?? this.all(() => true).find(says) ?? null;
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
