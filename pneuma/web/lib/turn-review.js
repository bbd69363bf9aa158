// A turn's changes in the mode's own terms, under its message in the chat
// (docs/checkpoints.md, "In the chat"; issue 28, items 1 and 2).
//
// When a turn ends the server describes it through the mode's change
// describer (docs/hooks.md, "register_change_describers") and broadcasts
// `turn_described` {ref, source, changes}; lib/rewind.js keeps it on the
// turn. A turn the page did not see described (a reload, history) is asked
// for with GET /api/checkpoints/{ref}/changes, once its message is on
// screen. The line shows "Slide 3: title changed · Slide 7: moved after
// slide 4 +2 more"; opened, each change has "Show" (the viewer's
// `navigate-to` with the change's `locate`, docs/viewer-contract.md) and
// "Revert" (POST /api/checkpoints/{ref}/changes/{id}/revert: a file
// changed since the turn is listed and never overwritten unless ticked;
// the server then lists the revert in the chat with an Undo, as a rewind).
//
// The line's place is taken as soon as the turn is known to have changed
// files (with "Describing…"), so the description arriving later, perhaps
// while the next answer streams, never moves the chat.

import { html, render, useState, useEffect, useRef } from '../vendor/preact-htm.js';
import { fetchJson } from './viewer-helpers.js';
import { t, localized } from './i18n.js';
import { ui } from './shell-state.js';
import { FileDiff } from './file-diff.js';
import { openDialogPortal } from './dialogs.js';

const SUMMARY_CHARS = 72; // what fits one line of the chat at its usual width
const SUMMARY_ITEMS = 3;
const BROADCAST_WAIT_MS = 2500; // a live turn's own broadcast comes first; ask only if it does not

/** "where: what" of a change, in the page's language. */
export function changeText(change) {
  const where = localized(change.where);
  const what = localized(change.what);
  return where && what ? `${where}${t('turnReview.separator')}${what}` : where || what;
}

/** The one-line summary: the first changes that fit, and how many more. */
export function summaryOf(changes, { chars = SUMMARY_CHARS, items = SUMMARY_ITEMS } = {}) {
  const shown = [];
  let used = 0;
  for (const change of changes) {
    const text = changeText(change);
    const cost = text.length + (shown.length ? 3 : 0);
    if (shown.length >= items || (shown.length && used + cost > chars)) break;
    shown.push(text);
    used += cost;
  }
  return { shown, more: changes.length - shown.length };
}

/** The description a `turn_described` message (or the route's answer) gives. */
export function describedFrom(body) {
  return {
    source: body.source === 'mode' ? 'mode' : 'files',
    changes: Array.isArray(body.changes) ? body.changes.filter((c) => c && typeof c.id === 'string') : [],
    warning: body.warning || null,
  };
}

/** The conflicts of a refused revert (409 E_CONFLICT), as [{path, reason}]. */
export function conflictsOf(error) {
  const listed = error && error.code === 'E_CONFLICT' && error.details && error.details.conflicts;
  return Array.isArray(listed) ? listed.filter((c) => c && typeof c.path === 'string') : [];
}

// Catalogue keys, spelt out so that the catalogue test finds them.
const REASONS = {
  edited_by_hand: 'turnReview.reason.edited_by_hand',
  changed_by_a_later_turn: 'turnReview.reason.changed_by_a_later_turn',
};

/** Why a file is a conflict, in the page's language (the server's code otherwise). */
export function reasonText(reason) {
  return REASONS[reason] ? t(REASONS[reason]) : String(reason);
}

function revertUrl(ref, id) {
  return `/api/checkpoints/${encodeURIComponent(ref)}/changes/${encodeURIComponent(id)}/revert`;
}

/** Show the change's spot: the viewer's navigate-to with `locate`, else bring its file forward. */
async function showSpot(locate) {
  const host = ui.host;
  if (!host || !locate) return;
  const result = await host.runAction('navigate-to', { ...locate });
  if (!result.success && typeof locate.file === 'string') await host.reveal(locate.file);
}

/** Ask for a turn's description once its message is on screen, unless it comes by itself. */
function useDescription(turn, element, changed) {
  const [, redraw] = useState(0);
  useEffect(() => {
    if (!changed || turn.described || !element.current) return undefined;
    let timer = null;
    let live = true;
    const load = () => {
      if (!live || turn.described) return;
      // One request per turn, whichever of its rows (a re-mounted one too) waits for it.
      turn.describing ||= fetchJson(`/api/checkpoints/${encodeURIComponent(turn.ref)}/changes`)
        .then(describedFrom, (error) => ({ error: error.message }))
        .then((described) => { if (!turn.described) turn.described = described; });
      turn.describing.then(() => { if (live) redraw((n) => n + 1); });
    };
    const start = () => {
      const wait = turn.endedLive ? Math.max(0, turn.endedLive + BROADCAST_WAIT_MS - Date.now()) : 0;
      timer = setTimeout(load, wait);
    };
    if (typeof IntersectionObserver !== 'function') {
      start();
      return () => { live = false; clearTimeout(timer); };
    }
    const seen = new IntersectionObserver((entries) => {
      if (!entries.some((e) => e.isIntersecting)) return;
      seen.disconnect();
      start();
    });
    seen.observe(element.current);
    return () => { live = false; seen.disconnect(); clearTimeout(timer); };
  }, [turn, changed]); // a description arriving meanwhile is seen by load()
}

/** Under a user message, above its files: the turn's changes in the mode's terms. */
export function TurnReview({ turn, changed, running }) {
  const [open, setOpen] = useState(false);
  const element = useRef(null);
  useDescription(turn, element, changed);
  if (!changed) return null;
  const described = turn.described;
  const ready = described && Array.isArray(described.changes);
  let line;
  if (!ready) {
    line = html`<span class="turn-summary pending muted">${described && described.error
      ? t('turnReview.failed', { message: described.error }) : t('turnReview.describing')}</span>`;
  } else {
    const { shown, more } = summaryOf(described.changes);
    line = html`<button class=${`turn-summary${open ? ' open' : ''}`} aria-expanded=${open}
        title=${t('turnReview.summaryTitle')} onClick=${() => setOpen(!open)}>
      <span class="turn-summary-text">${shown.join(' · ')}</span>
      ${more > 0 && html`<span class="turn-summary-more">${t('turnReview.more', { count: more })}</span>`}
    </button>`;
  }
  return html`<div class="turn-review" ref=${element} data-source=${ready ? described.source : ''}>
    ${line}
    ${open && ready && html`<ul class="turn-change-list" aria-label=${t('turnReview.listTitle')}>
      ${described.warning && html`<li class="turn-change-warning muted" title=${described.warning}>${t('turnReview.warning')}</li>`}
      ${described.changes.map((change) => html`<${ChangeItem} key=${change.id} turn=${turn} change=${change} running=${running} />`)}
    </ul>`}
  </div>`;
}

function ChangeItem({ turn, change, running }) {
  const [working, setWorking] = useState(false);
  const [problem, setProblem] = useState(null);
  const [diff, setDiff] = useState(false);
  const [, redraw] = useState(0);
  const button = useRef(null);
  // Reverted: by this page's answer at once, else by the revert's note in
  // the chat (lib/rewind.js keeps it on the turn until its Undo is used).
  const done = !!(turn.reverted && turn.reverted.has(change.id));
  const finish = (answer) => {
    if (answer && answer.undoRef) (turn.reverted ||= new Map()).set(change.id, answer.undoRef);
    redraw((n) => n + 1);
  };
  const revert = async () => {
    setWorking(true);
    setProblem(null);
    try {
      finish(await fetchJson(revertUrl(turn.ref, change.id), { method: 'POST', json: { overwrite: [] } }));
    } catch (error) {
      const conflicts = conflictsOf(error);
      if (conflicts.length) {
        openRevertDialog({ turn, change, conflicts, onDone: finish,
          onClosed: () => button.current && button.current.focus({ preventScroll: true }) });
      } else setProblem(error.message);
    }
    setWorking(false);
  };
  const where = localized(change.where);
  const what = localized(change.what);
  return html`<li class="turn-change" data-change-id=${change.id} data-kind=${change.kind}>
    <span class="tc-label"><span class="tc-where">${where}</span>${where && what ? t('turnReview.separator') : ''}<span class="tc-what">${what}</span></span>
    <span class="tc-actions">
      <button class="link tc-diff" aria-expanded=${diff} title=${t('turnReview.diffTitle')}
        onClick=${() => setDiff(!diff)}>${t('turnReview.diff')}</button>
      ${change.locate && html`<button class="link tc-show" title=${t('turnReview.showTitle')}
        onClick=${() => showSpot(change.locate).catch((error) => setProblem(error.message))}>${t('turnReview.show')}</button>`}
      ${change.revertible !== false
        ? html`<button class="link tc-revert" ref=${button} disabled=${done || working || running}
            title=${running ? t('rewind.busyTitle') : t('turnReview.revertTitle')} onClick=${revert}>
            ${done ? t('turnReview.reverted') : working ? t('turnReview.reverting') : t('turnReview.revert')}</button>`
        : html`<span class="tc-fixed muted" title=${t('turnReview.notRevertibleTitle')}>${t('turnReview.notRevertible')}</span>`}
    </span>
    ${problem && html`<div class="tc-problem rewind-failed" role="alert">${problem}</div>`}
    ${diff && html`<div class="tc-diffs">${change.files.map((path) => html`<div class="tc-file" key=${path} data-path=${path}>
      <div class="tc-file-path">${path}</div><${FileDiff} turn=${turn} path=${path} /></div>`)}</div>`}
  </li>`;
}

// --- the confirmation of a revert that would overwrite files edited since ----

function openRevertDialog({ turn, change, conflicts, onDone, onClosed }) {
  openDialogPortal((close) => html`<${RevertDialog} turn=${turn} change=${change}
    conflicts=${conflicts} onDone=${onDone} close=${close} />`, onClosed);
}

function RevertDialog({ turn, change, conflicts, onDone, close }) {
  const [ticked, setTicked] = useState(() => new Set());
  const [working, setWorking] = useState(false);
  const [problem, setProblem] = useState(null);
  const [listed, setListed] = useState(conflicts);
  const dialog = useRef(null);
  useEffect(() => {
    const first = dialog.current && dialog.current.querySelector('input, button');
    if (first) first.focus();
  }, []);
  const toggle = (path) => {
    const next = new Set(ticked);
    if (next.has(path)) next.delete(path);
    else next.add(path);
    setTicked(next);
  };
  const all = listed.every((c) => ticked.has(c.path));
  const run = async () => {
    setWorking(true);
    setProblem(null);
    try {
      onDone(await fetchJson(revertUrl(turn.ref, change.id), { method: 'POST', json: { overwrite: [...ticked] } }));
      close();
    } catch (error) {
      const again = conflictsOf(error);
      if (again.length) setListed(again); // edited again meanwhile: ask about those
      else setProblem(error.message);
      setWorking(false);
    }
  };
  const onKeyDown = (e) => {
    if (e.key !== 'Tab' || !dialog.current) return;
    const focusable = [...dialog.current.querySelectorAll('button:not([disabled]), input:not([disabled])')];
    if (!focusable.length) return;
    const first = focusable[0];
    const last = focusable[focusable.length - 1];
    if (e.shiftKey && document.activeElement === first) { e.preventDefault(); last.focus(); }
    else if (!e.shiftKey && document.activeElement === last) { e.preventDefault(); first.focus(); }
  };
  return html`<div class="modal-backdrop" onKeyDown=${onKeyDown}>
    <div class="modal modal-wide rewind-dialog revert-dialog" role="dialog" aria-modal="true"
        aria-labelledby="revert-title" ref=${dialog} data-change-id=${change.id}>
      <h2 id="revert-title">${t('turnReview.confirmTitle', { change: changeText(change) })}</h2>
      <p class="modal-summary">${t('turnReview.confirmSummary')}</p>
      <div class="details"><div class="detail detail-conflicts">
        <div class="detail-key">${t('rewind.conflicts')} (${listed.length})</div>
        <ul class="conflict-list">${listed.map((c) => html`<li data-path=${c.path}>
          <label><input type="checkbox" checked=${ticked.has(c.path)} onChange=${() => toggle(c.path)} />
            <span class="conflict-action">${t('rewind.overwrite')}</span>
            <span class="conflict-path">${c.path}</span>
            ${c.reason && html`<span class="muted">(${reasonText(c.reason)})</span>`}</label>
        </li>`)}</ul>
      </div></div>
      ${problem && html`<div class="notice error rewind-problem" role="alert"><div class="notice-body">${problem}</div></div>`}
      <div class="modal-actions">
        <button class="btn" onClick=${close}>${t('rewind.cancel')}</button>
        <button class="btn primary revert-confirm" disabled=${working || !all} onClick=${run}
          title=${all ? '' : t('turnReview.tickAll')}>${working ? t('turnReview.reverting') : t('turnReview.revert')}</button>
      </div>
    </div>
  </div>`;
}
