// "What changed" and "Rewind to here" in the chat (docs/checkpoints.md).
//
// Before each user turn the server records the workspace's watched files
// and says so (`turn_checkpoint`: the ref and the user message it belongs
// to, by client_msg_id, else by timestamp); when the turn ends it says what
// the turn changed (`turn_changes`). Under each such user message: a chip
// "N files changed" that opens the list of files with a diff each, and
// "Rewind to here", which asks first (what will change, and which files were
// edited by hand since: never overwritten unless ticked), then restores
// (POST /api/checkpoints/{ref}/restore). The server broadcasts the rewind
// (`workspace_restored`), shown as a note with an Undo button.
//
// The shared store (lib/store.js) knows none of these messages: this module
// keeps its own state from the socket (`rewind.receive`, called after the
// store has applied each message) and puts its notes among the store's
// items (kind 'rewind'), where their time says they belong: a rewind
// happens between turns (the server refuses one mid-turn), so before the
// first user message sent after it.

import { html, render, useState, useEffect, useRef } from '../vendor/preact-htm.js';
import { fetchJson } from './viewer-helpers.js';
import { t } from './i18n.js';
import { TurnReview, changeText, describedFrom } from './turn-review.js';
import { FileDiff } from './file-diff.js';
import { openDialogPortal } from './dialogs.js';

const turnsByRef = new Map(); // ref -> {ref, clientId, timestamp, changes | null}
const refByClientId = new Map();
const refByTimestamp = new Map();
const usedUndos = new Set(); // undo refs already restored (their Undo is spent)
let noteCounter = 0;

function isRunning(store) {
  const status = store.state.status;
  return !!status && status !== 'idle';
}

function learn(message, live = false) {
  if (message.type === 'turn_checkpoint') {
    const turn = turnsByRef.get(message.ref) || { ref: message.ref, changes: null };
    turn.clientId = message.client_msg_id || null;
    turn.timestamp = message.user_timestamp ?? null;
    turnsByRef.set(message.ref, turn);
    if (turn.clientId) refByClientId.set(turn.clientId, message.ref);
    if (turn.timestamp != null) refByTimestamp.set(turn.timestamp, message.ref);
    return null;
  }
  if (message.type === 'turn_changes') {
    const turn = turnsByRef.get(message.ref) || { ref: message.ref, clientId: null, timestamp: null };
    turn.changes = message.changes || { added: [], modified: [], removed: [] };
    if (live) turn.endedLive = Date.now(); // its turn_described is on its way (lib/turn-review.js)
    turnsByRef.set(message.ref, turn);
    return null;
  }
  if (message.type === 'turn_described') {
    const turn = turnsByRef.get(message.ref) || { ref: message.ref, clientId: null, timestamp: null, changes: null };
    turn.described = describedFrom(message);
    turnsByRef.set(message.ref, turn);
    return null;
  }
  if (message.type === 'workspace_restored') {
    usedUndos.add(message.target);
    forgetReverts(message.target);
    const change = message.reverted_change; // one change reverted (lib/turn-review.js)
    const turn = change && turnsByRef.get(message.target);
    if (turn && message.undo) (turn.reverted ||= new Map()).set(change.id, message.undo);
    return { kind: 'rewind', key: `rw${++noteCounter}`, data: message, rev: 0 };
  }
  return null;
}

/** An undo point restored: the change it had reverted is back, and can be reverted again. */
function forgetReverts(undoRef) {
  for (const turn of turnsByRef.values()) {
    if (!turn.reverted) continue;
    for (const [id, undo] of turn.reverted) if (undo === undoRef) turn.reverted.delete(id);
  }
}

/** Put rewind notes among the items: before the first user message sent after them. */
function place(store, notes) {
  const items = store.state.items;
  for (const note of notes) {
    const when = note.data.timestamp;
    let index = items.findIndex((i) => i.kind === 'user' && typeof i.timestamp === 'number' && i.timestamp > when);
    if (index < 0) index = items.length;
    items.splice(index, 0, note);
  }
}

export const rewind = {
  /** A socket message the store has just applied (duplicates never come here). */
  receive(store, message) {
    // A switched conversation's history replaces the chat just as
    // message_history does (lib/store.js), so it is learned the same way.
    const replacesHistory = message.type === 'message_history' || message.type === 'conversation_switched';
    if (replacesHistory || message.type === 'history_page') {
      if (replacesHistory) {
        turnsByRef.clear();
        refByClientId.clear();
        refByTimestamp.clear();
        usedUndos.clear();
      }
      const notes = (message.messages || []).map((m) => learn(m)).filter(Boolean);
      place(store, notes);
      if (notes.length) store.notify();
      return;
    }
    const note = learn(message, true);
    if (note) {
      store.state.items.push(note);
      store.notify();
    } else if (['turn_checkpoint', 'turn_changes', 'turn_described'].includes(message.type)) {
      store.notify();
    }
  },
};

function turnOf(item) {
  const ref = (item.clientId && refByClientId.get(item.clientId))
    || (typeof item.timestamp === 'number' && refByTimestamp.get(item.timestamp));
  return ref ? turnsByRef.get(ref) : null;
}

const KINDS = ['added', 'modified', 'removed'];
// Catalogue keys, spelt out so that the catalogue test finds them.
const KIND_LABELS = { added: 'rewind.added', modified: 'rewind.modified', removed: 'rewind.removed' };
const ACTION_LABELS = { write: 'rewind.write', create: 'rewind.create', delete: 'rewind.delete' };

function ChangedFile({ turn, kind, path }) {
  const [open, setOpen] = useState(false);
  return html`<li class=${`changed-file${open ? ' open' : ''}`} data-path=${path} data-change=${kind}>
    <button class="changed-file-head" aria-expanded=${open} onClick=${() => setOpen(!open)}>
      <span class=${`change-kind ${kind}`}>${t(KIND_LABELS[kind])}</span>
      <span class="changed-path" title=${path}>${path}</span>
    </button>
    ${open && html`<${FileDiff} turn=${turn} path=${path} />`}
  </li>`;
}

function ChangesPanel({ turn }) {
  const changes = turn.changes;
  return html`<div class="changes-panel" role="region" aria-label=${t('rewind.panelTitle')}>
    <ul class="changed-files">${KINDS.flatMap((kind) => (changes[kind] || []).map((path) => html`<${ChangedFile} key=${`${kind}:${path}`} turn=${turn} kind=${kind} path=${path} />`))}</ul>
  </div>`;
}

/** Under a user message: what its turn changed, and "Rewind to here". */
export function TurnChanges({ item, store }) {
  const [open, setOpen] = useState(false);
  const button = useRef(null);
  const turn = turnOf(item);
  if (!turn) return null;
  const running = isRunning(store);
  const changes = turn.changes;
  const count = changes ? KINDS.reduce((n, kind) => n + (changes[kind] || []).length, 0) : 0;
  const ask = () => openRewindDialog(turn.ref, () => button.current && button.current.focus({ preventScroll: true }), turn);
  return html`<div class="turn-changes" data-ref=${turn.ref}>
    <${TurnReview} turn=${turn} changed=${count > 0} running=${running} />
    <div class="turn-changes-row">
      ${changes && count > 0 && html`<button class=${`changes-chip${open ? ' open' : ''}`} aria-expanded=${open} onClick=${() => setOpen(!open)}>
        <span class="changes-counts">${KINDS.map((kind) => (changes[kind] || []).length > 0 && html`<span class=${`count ${kind}`}>${kind === 'added' ? '+' : kind === 'removed' ? '−' : '~'}${changes[kind].length}</span>`)}</span>
        ${t('rewind.filesChanged', { count })}
      </button>`}
      ${changes && count === 0 && html`<span class="changes-none">${t('rewind.noChanges')}</span>`}
      <button class="rewind-btn" ref=${button} disabled=${running} onClick=${ask}
        title=${running ? t('rewind.busyTitle') : t('rewind.buttonTitle')}>${t('rewind.button')}</button>
      ${changes && count > 0 && html`<button class="compare-btn" title=${t('compare.buttonTitle')} onClick=${() => window.dispatchEvent(new CustomEvent('pneuma:compare', { detail: { ref: turn.ref } }))}>${t('compare.button')}</button>`}
    </div>
    ${open && changes && html`<${ChangesPanel} turn=${turn} />`}
  </div>`;
}

// --- the confirmation -------------------------------------------------------

/** The dialog, rendered into a root of its own on <body> (a portal): the
 *  chat's scrolling list must not clip or move it. */
export function openRewindDialog(ref, onClosed, turn = null) {
  openDialogPortal((close) => html`<${RewindDialog} target=${ref} turn=${turn} close=${close} />`,
    onClosed);
}


function PlanList({ title, kind, paths }) {
  if (!paths.length) return null;
  return html`<div class=${`detail detail-${kind}`}>
    <div class="detail-key">${title} (${paths.length})</div>
    <ul class="detail-list">${paths.map((p) => html`<li>${p}</li>`)}</ul>
  </div>`;
}

function RewindDialog({ target, turn, close }) {
  const [plan, setPlan] = useState(null);
  const [problem, setProblem] = useState(null);
  const [ticked, setTicked] = useState(() => new Set());
  const [working, setWorking] = useState(false);
  const [what, setWhat] = useState('files'); // files | conversation | both
  const [talk, setTalk] = useState(null); // whether the conversation can be rewound here
  const confirm = useRef(null);
  const dialog = useRef(null);
  const undoing = target.startsWith('u');
  // The message to go back before: by its id, else by its time (seconds in
  // the log, milliseconds to the route).
  const message = turn && (turn.clientId ? { clientMsgId: turn.clientId }
    : typeof turn.timestamp === 'number' ? { timestamp: turn.timestamp * 1000 } : null);
  useEffect(() => {
    fetchJson(`/api/checkpoints/${encodeURIComponent(target)}/plan`)
      .then(setPlan)
      .catch((error) => setProblem(t('rewind.planFailed', { message: error.message })));
    if (message) conversationRewindAvailable().then(setTalk);
  }, [target]);
  useEffect(() => {
    const focus = confirm.current || (dialog.current && dialog.current.querySelector('button'));
    if (focus) focus.focus();
  }, [plan, problem]);
  const steps = plan ? plan.write.length + plan.create.length + plan.delete.length : 0;
  const files = what !== 'conversation';
  const doable = (files && steps > 0) || what !== 'files';
  const conflicts = plan ? plan.conflicts : [];
  const plain = (paths) => paths.filter((p) => !conflicts.includes(p));
  const actionOf = (path) => (plan.write.includes(path) ? 'write' : plan.create.includes(path) ? 'create' : 'delete');
  const toggle = (path) => {
    const next = new Set(ticked);
    if (next.has(path)) next.delete(path);
    else next.add(path);
    setTicked(next);
  };
  const run = async () => {
    setWorking(true);
    setProblem(null);
    try {
      // Both: the files first, so a refused restore leaves the conversation as it is.
      if (files && steps > 0) {
        await fetchJson(`/api/checkpoints/${encodeURIComponent(target)}/restore`, {
          method: 'POST', json: { overwrite: [...ticked], keepConflicts: true },
        });
      }
      if (what !== 'files') await fetchJson('/api/conversation/rewind', { method: 'POST', json: message });
      close();
    } catch (error) {
      setWorking(false);
      setProblem(error.message);
    }
  };
  const onKeyDown = (e) => {
    if (e.key === 'Tab' && dialog.current) {
      // Focus stays in the dialog.
      const focusable = [...dialog.current.querySelectorAll('button:not([disabled]), input:not([disabled])')];
      if (!focusable.length) return;
      const first = focusable[0];
      const last = focusable[focusable.length - 1];
      if (e.shiftKey && document.activeElement === first) { e.preventDefault(); last.focus(); }
      else if (!e.shiftKey && document.activeElement === last) { e.preventDefault(); first.focus(); }
    }
  };
  const title = undoing ? t('rewind.undoTitle') : t('rewind.confirmTitle', { turn: target });
  return html`<div class="modal-backdrop" onKeyDown=${onKeyDown}>
    <div class="modal modal-wide rewind-dialog" role="dialog" aria-modal="true" aria-labelledby="rewind-title" ref=${dialog} data-target=${target}>
      <h2 id="rewind-title">${title}</h2>
      ${message && !undoing && html`<${RewindChoice} what=${what} setWhat=${setWhat} talk=${talk} />`}
      ${what === 'conversation' && html`<p class="modal-summary">${t('turnReview.conversationSummary')}</p>`}
      ${files && !plan && !problem && html`<p class="modal-summary"><span class="spinner" />${t('rewind.planLoading')}</p>`}
      ${files && plan && steps === 0 && html`<p class="modal-summary">${what === 'both' ? t('turnReview.filesUnchanged') : t('rewind.nothing')}</p>`}
      ${files && plan && steps > 0 && html`<p class="modal-summary">${undoing ? t('rewind.undoSummary') : what === 'both' ? t('turnReview.bothSummary') : t('rewind.confirmSummary')}</p>
        <div class="details">
          <${PlanList} title=${t(ACTION_LABELS.write)} kind="write" paths=${plain(plan.write)} />
          <${PlanList} title=${t(ACTION_LABELS.create)} kind="create" paths=${plain(plan.create)} />
          <${PlanList} title=${t(ACTION_LABELS.delete)} kind="delete" paths=${plain(plan.delete)} />
          ${conflicts.length > 0 && html`<div class="detail detail-conflicts">
            <div class="detail-key">${t('rewind.conflicts')} (${conflicts.length})</div>
            <p class="rewind-hint">${t('rewind.conflictsHint')}</p>
            <ul class="conflict-list">${conflicts.map((path) => html`<li data-path=${path}>
              <label><input type="checkbox" checked=${ticked.has(path)} onChange=${() => toggle(path)} />
                <span class="conflict-action">${t('rewind.overwrite')}</span>
                <span class="conflict-path">${path}</span>
                <span class="muted">(${t(ACTION_LABELS[actionOf(path)])})</span></label>
            </li>`)}</ul>
          </div>`}
          ${plan.leftAsIs.length > 0 && html`<div class="detail detail-left">
            <div class="detail-key">${t('rewind.leftAsIs')} (${plan.leftAsIs.length})</div>
            <ul class="detail-list">${plan.leftAsIs.map((item) => html`<li>${item.path} · ${item.why}</li>`)}</ul>
          </div>`}
        </div>`}
      ${problem && html`<div class="notice error rewind-problem" role="alert"><div class="notice-body">${problem}</div></div>`}
      <div class="modal-actions">
        <button class="btn" onClick=${close}>${doable ? t('rewind.cancel') : t('rewind.close')}</button>
        ${doable && html`<button class="btn primary rewind-confirm" ref=${confirm} disabled=${working || (what !== 'files' && talk !== true)} onClick=${run}>
          ${working ? t('rewind.working') : undoing ? t('rewind.undo') : t(CONFIRM_LABELS[what])}</button>`}
      </div>
    </div>
  </div>`;
}

// Catalogue keys, spelt out so that the catalogue test finds them.
const CONFIRM_LABELS = { files: 'rewind.confirm', conversation: 'turnReview.confirmConversation', both: 'turnReview.confirmBoth' };
const CHOICES = [
  ['files', 'turnReview.choiceFiles'], ['conversation', 'turnReview.choiceConversation'], ['both', 'turnReview.choiceBoth'],
];

/** Whether this server rewinds conversations (POST /api/conversation/rewind,
 *  docs/conversations.md): its branch list answers. A 404 says it does not. */
async function conversationRewindAvailable() {
  try {
    await fetchJson('/api/conversation/branches');
    return true;
  } catch (error) {
    return error.status !== 404;
  }
}

/** Files only (the default), the conversation only, or both. */
function RewindChoice({ what, setWhat, talk }) {
  return html`<fieldset class="rewind-choice">
    <legend>${t('turnReview.choiceLegend')}</legend>
    ${CHOICES.map(([value, key]) => {
      const off = value !== 'files' && talk === false;
      return html`<label class=${`rewind-choice-item${off ? ' off' : ''}`} data-choice=${value}>
        <input type="radio" name="rewind-what" value=${value} checked=${what === value} disabled=${off}
          onChange=${() => setWhat(value)} />
        <span>${t(key)}</span></label>`;
    })}
    ${talk === false && html`<p class="rewind-hint">${t('turnReview.conversationUnavailable')}</p>`}
  </fieldset>`;
}

// --- the note a rewind leaves in the chat -------------------------------------

function FileList({ paths }) {
  const shown = paths.slice(0, 8);
  return html`<ul class="rewind-files">${shown.map((p) => html`<li>${p}</li>`)}${paths.length > shown.length && html`<li class="muted">${t('rewind.more', { count: paths.length - shown.length })}</li>`}</ul>`;
}

export function RewindNote({ item, store }) {
  const data = item.data || {};
  const [problem, setProblem] = useState(null);
  const [working, setWorking] = useState(false);
  const restored = data.restored || [];
  const kept = data.kept_conflicts || [];
  const failed = data.failed || [];
  const undone = data.undo && usedUndos.has(data.undo);
  // One change reverted (lib/turn-review.js) is listed as a rewind is, naming the change.
  const change = data.reverted_change;
  const title = String(data.target || '').startsWith('u')
    ? t('rewind.undone', { count: restored.length })
    : change ? t('turnReview.revertedNote', { change: changeText(change), turn: data.target, count: restored.length })
      : t('rewind.done', { turn: data.target, count: restored.length });
  const undo = async () => {
    setWorking(true);
    setProblem(null);
    const undoRef = encodeURIComponent(data.undo);
    try {
      // Files edited by hand since the rewind: ask, as for any rewind;
      // otherwise the undo is what the person just asked for.
      const plan = await fetchJson(`/api/checkpoints/${undoRef}/plan`);
      if (plan.conflicts.length) openRewindDialog(data.undo);
      else await fetchJson(`/api/checkpoints/${undoRef}/restore`, { method: 'POST', json: {} });
    } catch (error) {
      setProblem(error.message);
    }
    setWorking(false);
  };
  return html`<div class="notice rewind-note" data-target=${data.target} data-undo=${data.undo || ''}
      data-change-id=${change ? change.id : ''}>
    <div class="rewind-note-head">
      <div class="notice-title">${title}</div>
      ${data.undo && html`<button class="btn rewind-undo" disabled=${undone || working || isRunning(store)} onClick=${undo}>
        ${undone ? t('rewind.undoDone') : t('rewind.undo')}</button>`}
    </div>
    ${data.origin === 'terminal' && html`<div class="notice-hint rewind-origin">${t('rewind.fromTerminal')}</div>`}
    ${restored.length > 0 && html`<${FileList} paths=${restored} />`}
    ${kept.length > 0 && html`<div class="notice-hint">${t('rewind.keptConflicts', { paths: kept.join(', ') })}</div>`}
    ${failed.length > 0 && html`<div class="notice-hint rewind-failed">${t('rewind.failed', { paths: failed.map((f) => `${f.path} (${f.error})`).join(', ') })}</div>`}
    ${restored.length > 0 && html`<div class="notice-hint">${t('rewind.agentTold')}</div>`}
    ${problem && html`<div class="notice-hint rewind-failed" role="alert">${problem}</div>`}
  </div>`;
}
