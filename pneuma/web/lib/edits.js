// Edit in place, the shell's side (docs/viewer-contract.md, "Edit in place"):
// `ctx.editFile(path, content, {base})` sends POST /api/edits over the text
// the edit started from; a conflict (the agent wrote meanwhile) opens a
// dialog with both versions, "Keep theirs" / "Use mine", both copyable;
// Ctrl-Z outside a text field undoes the last hand edits in order (each undo
// an edit of its own, over the text it undoes), Ctrl-Shift-Z (or Ctrl-Y)
// redoes. "Use mine" makes the person's change on the agent's text when the
// two changed different parts (mergeEdits), else writes the person's text.
// The stacks and the merge are plain data (tests/js/edits.test.mjs).

import { sha256Hex } from './source-edit.js';
import { fetchJson } from './viewer-helpers.js';
import { t } from './i18n.js';

const HISTORY_LIMIT = 50;

/** The undo and redo stacks. An entry `{path, before, after}` means: the
 *  file went from `before` to `after`; undoing writes `before` over `after`. */
export class EditHistory {
  constructor(limit = HISTORY_LIMIT) {
    this.limit = limit;
    this.undoable = [];
    this.redoable = [];
  }

  /** A new hand edit: it can be undone; what was undone can no longer be redone. */
  record(entry) {
    this.push(this.undoable, entry);
    this.redoable = [];
  }

  push(stack, entry) {
    stack.push(entry);
    if (stack.length > this.limit) stack.shift();
  }

  takeUndo() { return this.undoable.pop() || null; }

  takeRedo() { return this.redoable.pop() || null; }

  /** `entry` was undone: redo writes its `after` back over its `before`. */
  undone(entry) { this.push(this.redoable, entry); }

  /** `entry` was redone: it can be undone again. */
  redone(entry) { this.push(this.undoable, entry); }
}

/** What changed from `base` to `text`, as one splice of `base`:
 *  {start, end, insert} (the common head and tail left out). */
export function spliceOf(base, text) {
  let start = 0;
  const most = Math.min(base.length, text.length);
  while (start < most && base[start] === text[start]) start += 1;
  let tail = 0;
  while (tail < most - start && base[base.length - 1 - tail] === text[text.length - 1 - tail]) tail += 1;
  return { start, end: base.length - tail, insert: text.slice(start, text.length - tail) };
}

/**
 * The person's change (base → mine) made on the agent's text (base →
 * theirs) when the two touch different parts of the file, so that "Use
 * mine" keeps the agent's change too; null when they overlap (then "Use
 * mine" is the person's whole text).
 */
export function mergeEdits(base, mine, theirs) {
  const ours = spliceOf(base, mine);
  const agents = spliceOf(base, theirs);
  if (!(ours.end < agents.start || agents.end < ours.start)) return null;
  const [later, earlier] = ours.start > agents.start ? [ours, agents] : [agents, ours];
  let text = base.slice(0, later.start) + later.insert + base.slice(later.end);
  text = text.slice(0, earlier.start) + earlier.insert + text.slice(earlier.end);
  return text;
}

function postEdit(body) {
  return fetchJson('/api/edits', { method: 'POST', json: body });
}

/** Whether a key press belongs to a text field (its own undo), not to the page. */
function inTextField(target) {
  if (!target || target.nodeType !== 1) return false;
  if (target.isContentEditable) return true;
  return /^(input|textarea|select)$/i.test(target.tagName || '');
}

export class HandEditor {
  /**
   * @param {object} o
   * @param {() => Array} o.files  the files the viewer has ({path, content})
   * @param {Function} [o.send]    POST /api/edits (a stand-in in unit tests)
   * @param {Function} [o.resolveConflict]  ({path, mine, theirs, kept}) => 'mine' | 'theirs'
   */
  constructor({ files, send = postEdit, resolveConflict = showConflictDialog }) {
    this.files = files;
    this.send = send;
    this.resolveConflict = resolveConflict;
    this.history = new EditHistory();
    this.busy = Promise.resolve();
    this.inFlight = 0;  // edits sent and not yet answered (editFile)
  }

  current(path) {
    const file = (this.files() || []).find((f) => f.path === path);
    return file && typeof file.content === 'string' ? file.content : null;
  }

  /** ctx.editFile: write `content` over `base` (default: the file as the
   *  viewer has it). Resolves `{ok: true, path, sha256}` when written, or
   *  `{ok: false, code, message}` (E_CONFLICT when the person kept theirs). */
  async editFile(path, content, { base } = {}) {
    const start = base !== undefined ? base : this.current(path);
    if (typeof start !== 'string' || typeof content !== 'string') {
      return { ok: false, code: 'E_BAD_ARGS', message: `no text of ${path} to edit` };
    }
    // Recorded inside the queued step, and counted while it is on its way:
    // a Ctrl-Z pressed the moment the file changed (before the answer came)
    // queues behind this edit and undoes it, rather than finding nothing.
    this.inFlight += 1;
    try {
      return await this.serially(async () => {
        const result = await this.write(path, content, start);
        if (result.ok && result.changed !== false) this.history.record({ path, before: result.replaced, after: result.written });
        return result;
      });
    } finally {
      this.inFlight -= 1;
    }
  }

  // One edit at a time: an undo right after an edit waits for it.
  serially(run) {
    const next = this.busy.then(run, run);
    this.busy = next.catch(() => {});
    return next;
  }

  /** POST one edit; on a conflict ask the person, and with "Use mine" send it
   *  again over the text now on disk. `replaced`: the text it replaced;
   *  `written`: the text the file holds now. */
  async write(path, content, baseText) {
    try {
      const body = await this.send({ path, content, base_sha256: await sha256Hex(baseText) });
      return { ...body, ok: true, replaced: baseText, written: content };
    } catch (error) {
      if (error.code !== 'E_CONFLICT') {
        console.warn('pneuma: the edit was not saved', error);
        return { ok: false, code: error.code || 'E_IO', message: error.message };
      }
      const theirs = typeof error.details.current === 'string' ? error.details.current : '';
      // "Use mine" keeps the agent's change where the two do not overlap.
      const merged = mergeEdits(baseText, content, theirs);
      const mine = merged ?? content;
      const choice = await this.resolveConflict({ path, mine, theirs, merged: merged !== null, kept: error.details.kept || null });
      if (choice === 'mine') return this.write(path, mine, theirs);
      return { ok: false, code: 'E_CONFLICT', message: error.message, current: theirs, kept: error.details.kept || null };
    }
  }

  /** Undo the last hand edit; null when there is none. */
  undo() {
    return this.serially(async () => {
      const entry = this.history.takeUndo();
      if (!entry) return null;
      const result = await this.write(entry.path, entry.before, entry.after);
      if (result.ok) this.history.undone({ path: entry.path, before: result.written, after: result.replaced });
      return result;
    });
  }

  /** Redo the last undone edit; null when there is none. */
  redo() {
    return this.serially(async () => {
      const entry = this.history.takeRedo();
      if (!entry) return null;
      const result = await this.write(entry.path, entry.after, entry.before);
      if (result.ok) this.history.redone({ path: entry.path, before: result.replaced, after: result.written });
      return result;
    });
  }

  /** Ctrl-Z / Ctrl-Shift-Z / Ctrl-Y (Cmd on a Mac) outside text fields. */
  listen(doc) {
    const onKey = (event) => {
      if (!(event.ctrlKey || event.metaKey) || event.altKey || inTextField(event.target)) return;
      const key = event.key.toLowerCase();
      const redo = (key === 'z' && event.shiftKey) || (key === 'y' && !event.shiftKey);
      const undo = key === 'z' && !event.shiftKey;
      if (undo && (this.history.undoable.length || this.inFlight)) {
        event.preventDefault();
        this.undo();
      } else if (redo && this.history.redoable.length) {
        event.preventDefault();
        this.redo();
      }
    };
    doc.addEventListener('keydown', onKey);
    return () => doc.removeEventListener('keydown', onKey);
  }
}

async function copyText(text, button) {
  try {
    await navigator.clipboard.writeText(text);
  } catch {
    // No clipboard permission: the text is selected for the person to copy.
    const area = button.closest('section').querySelector('textarea');
    area.focus();
    area.select();
  }
  button.textContent = t('edits.copied');
}

function versionSection(kind, title, text) {
  const section = document.createElement('section');
  section.className = `edit-conflict-version edit-conflict-${kind}`;
  const heading = document.createElement('h3');
  heading.textContent = title;
  const area = document.createElement('textarea');
  area.readOnly = true;
  area.value = text;
  area.rows = 12;
  area.style.cssText = 'display:block;width:100%;box-sizing:border-box;font:12px/1.45 ui-monospace,monospace;margin:6px 0';
  area.setAttribute('aria-label', title);
  const copy = document.createElement('button');
  copy.type = 'button';
  copy.className = 'btn edit-conflict-copy';
  copy.textContent = t('edits.copy');
  copy.addEventListener('click', () => copyText(text, copy));
  section.append(heading, area, copy);
  return section;
}

/** The conflict dialog: both versions side by side; resolves 'mine' or 'theirs'. */
export function showConflictDialog({ path, mine, theirs, merged, kept }) {
  return new Promise((resolve) => {
    const backdrop = document.createElement('div');
    backdrop.className = 'modal-backdrop edit-conflict';
    const dialog = document.createElement('div');
    dialog.className = 'modal modal-wide';
    dialog.setAttribute('role', 'dialog');
    dialog.setAttribute('aria-modal', 'true');
    dialog.dataset.kind = 'edit-conflict';
    const title = document.createElement('h2');
    title.textContent = t('edits.conflictTitle');
    const summary = document.createElement('p');
    summary.className = 'modal-summary';
    summary.textContent = t('edits.conflictSummary', { path });
    const versions = document.createElement('div');
    versions.className = 'edit-conflict-versions';
    versions.style.cssText = 'display:grid;grid-template-columns:1fr 1fr;gap:12px';
    versions.append(versionSection('theirs', t('edits.theirs'), theirs),
      versionSection('mine', merged ? t('edits.mineMerged') : t('edits.mine'), mine));
    dialog.append(title, summary, versions);
    if (kept) {
      const note = document.createElement('p');
      note.className = 'muted edit-conflict-kept';
      note.textContent = t('edits.kept', { path: kept });
      dialog.append(note);
    }
    const actions = document.createElement('div');
    actions.className = 'modal-actions';
    const close = (choice) => {
      document.removeEventListener('keydown', onKey, true);
      backdrop.remove();
      resolve(choice);
    };
    const onKey = (event) => {
      if (event.key === 'Escape') {
        event.stopPropagation();
        close('theirs');
      }
    };
    for (const [choice, label, cls] of [['theirs', t('edits.keepTheirs'), 'btn'], ['mine', t('edits.useMine'), 'btn primary']]) {
      const button = document.createElement('button');
      button.type = 'button';
      button.className = `${cls} edit-conflict-${choice}-button`;
      button.textContent = label;
      button.addEventListener('click', () => close(choice));
      actions.append(button);
    }
    dialog.append(actions);
    backdrop.append(dialog);
    document.addEventListener('keydown', onKey, true);
    document.body.append(backdrop);
    actions.lastChild.focus();
  });
}
