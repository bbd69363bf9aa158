// The person's marks (pick, reject, star, comment) written to choices.json,
// and which of them the agent has not been told of yet.
//
// Writes go through ctx.editFile (POST /api/edits, base-SHA checked): a
// write over a choices.json that changed meanwhile is a conflict the shell
// shows, never a silent loss, and the agent's next message names the file
// as hand-edited (docs/viewer-contract.md, "Edit in place"). Marks are
// written one at a time, each over the text the previous one left, so quick
// clicks do not conflict with each other. A choices.json that does not
// exist yet is created with ctx.writeFile.

import { CHOICES_FILE, markChanges, normalizeMark, readChoices, writeChoices } from "./board.js";

const SEEN_KEY = "pneuma-illustrate-seen:"; // + the page's path: one baseline per session tab

export class ChoicesWriter {
  constructor(ctx) {
    this.ctx = ctx;
    this.queue = Promise.resolve();
    this.text = readChoices(ctx.files).text; // the file's text as last known (disk or our write)
    this.overrides = {}; // marks made here, shown at once, until the file says the same
    this.written = new Set(); // ids whose override is on disk: dropped at the file's next change
  }

  /** The file changed on disk (its text as the snapshot has it). */
  fileChanged(files) {
    this.text = readChoices(files).text;
    // The snapshot now holds what was written (or something newer): it counts.
    for (const id of this.written) delete this.overrides[id];
    this.written.clear();
  }

  /** The marks to show: the file's, with what is being written over them. */
  marks(files) {
    return { ...readChoices(files).choices, ...this.overrides };
  }

  /** Set one image's mark (fields of {status, starred, comment}); resolves
   * to {ok, message?}. */
  set(id, fields, files) {
    const mark = { ...normalizeMark(this.marks(files)[id]), ...fields };
    this.overrides[id] = mark;
    const run = () => this.write(id, mark);
    const done = this.queue.then(run, run);
    this.queue = done.catch(() => {});
    return done;
  }

  async write(id, mark) {
    const base = this.text;
    // A choices.json that does not parse is the person's (or the agent's) text
    // to fix: writing a fresh file over it would lose every mark it holds.
    const unreadable = base === null ? null : readChoices([{ path: CHOICES_FILE, content: base }]).error;
    if (unreadable) {
      if (this.overrides[id] === mark) delete this.overrides[id];
      return { ok: false, message: `${unreadable}; fix it before marking (nothing was written)` };
    }
    const next = writeChoices(base, { [id]: mark });
    let answer;
    if (base === null) {
      answer = await this.ctx.writeFile(CHOICES_FILE, next).then(() => ({ ok: true, written: next }),
        (error) => ({ ok: false, message: error.message, code: error.code }));
    } else {
      answer = await this.ctx.editFile(CHOICES_FILE, next, { base });
    }
    if (answer && answer.ok) {
      this.text = answer.written ?? next;
      // Shown until the watcher brings the written file: the snapshot in
      // between is the old one, and the next message would read it.
      if (this.overrides[id] === mark) this.written.add(id);
    } else {
      if (answer && typeof answer.current === "string") this.text = answer.current; // the person kept the file's version
      if (this.overrides[id] === mark) delete this.overrides[id];
    }
    return { ok: Boolean(answer && answer.ok), message: answer?.message || "" };
  }

  /** Resolves when every mark made so far is written. */
  settled() {
    return this.queue;
  }
}

/** The marks the agent was last told of (or saw on disk when the page
 * opened), kept per tab across a reload so a reload does not tell again. */
export class SeenMarks {
  constructor(files, storageKey) {
    this.key = SEEN_KEY + storageKey;
    const kept = this.load();
    this.seen = kept ?? readChoices(files).choices;
    if (!kept) this.save(); // a reload before the next message still knows what is new
  }

  load() {
    try {
      const raw = sessionStorage.getItem(this.key);
      return raw ? JSON.parse(raw) : null;
    } catch {
      return null;
    }
  }

  /** What changed since the agent last saw the marks. */
  pending(current) {
    return markChanges(this.seen, current);
  }

  /** The agent has been told of `current`. */
  delivered(current) {
    this.seen = JSON.parse(JSON.stringify(current));
    this.save();
  }

  save() {
    try {
      sessionStorage.setItem(this.key, JSON.stringify(this.seen));
    } catch {
      // storage full or refused: the baseline lives in memory for this page
    }
  }
}
