// Dialogs over the page: the confirmation a tool, the viewer or a backend
// asks of the person, with its details and diffs.

import { html, render, useEffect, useRef } from '../vendor/preact-htm.js';
import { t } from './i18n.js';
import { shell, store } from './shell-state.js';

function DetailList({ details }) {
  if (details == null) return null;
  if (typeof details !== 'object') return html`<p>${String(details)}</p>`;
  const hidden = new Set(['taskId', 'clientId']); // ids for the machines, not the person
  const entries = Object.entries(details).filter(([k, v]) => !hidden.has(k) && !(Array.isArray(v) && v.length === 0) && v != null && v !== '');
  const titles = {
    delete: t('details.delete'), write: t('details.write'), unusualPatterns: t('details.unusualPatterns'),
    client: t('details.client'), url: t('details.url'), actions: t('details.actions'), tool: t('details.tool'), input: t('tool.input'),
  };
  return html`<div class="details">${entries.map(([key, value]) => html`<div class=${`detail detail-${key}`}>
    <div class="detail-key">${titles[key] || key}${Array.isArray(value) ? ` (${value.length})` : ''}</div>
    ${Array.isArray(value)
      ? html`<ul class="detail-list">${value.slice(0, 200).map((v) => html`<li>${typeof v === 'string' ? v : JSON.stringify(v)}</li>`)}${value.length > 200 ? html`<li class="muted">${t('details.more', { count: value.length - 200 })}</li>` : ''}</ul>`
      : html`<div class="detail-value">${typeof value === 'string' ? value : JSON.stringify(value, null, 2)}</div>`}
  </div>`)}</div>`;
}

// A write_to_file dry run: {type: 'line', hunks: [{startOld, lenOld, startNew, lenNew, linesOld, linesNew}]}.
function DiffView({ path, diff }) {
  const hunks = (diff && Array.isArray(diff.hunks)) ? diff.hunks : [];
  const row = (cls, mark, n, text) => html`<div class=${`diff-line ${cls}`}><span class="diff-num">${n}</span><span class="diff-mark">${mark}</span><span class="diff-text">${text}</span></div>`;
  return html`<div class="details"><div class="detail detail-diff">
    <div class="detail-key">${path || t('diff.file')}</div>
    <div class="diff-view">${hunks.length === 0 ? html`<div class="diff-line muted">${t('diff.noChange')}</div>` : hunks.slice(0, 200).map((h) => html`<div class="diff-hunk">
      <div class="diff-line diff-head">@@ −${h.startOld},${h.lenOld} +${h.startNew},${h.lenNew} @@</div>
      ${(h.linesOld || []).map((t, i) => row('diff-del', '−', h.startOld + i, t))}
      ${(h.linesNew || []).map((t, i) => row('diff-add', '+', h.startNew + i, t))}
    </div>`)}</div>
  </div></div>`;
}

export function ConfirmDialog() {
  const confirmation = store.state.confirmations[0];
  const approve = useRef(null);
  useEffect(() => { if (confirmation && approve.current) approve.current.focus(); }, [confirmation && confirmation.request_id]);
  if (!confirmation) return null;
  const kindKey = { scaffold: 'confirm.scaffold', write: 'confirm.write', question: 'confirm.question', viewer: 'confirm.viewer', browser_task: 'confirm.browserTask' }[confirmation.kind] || 'confirm.viewer';
  const kindTitle = t(kindKey);
  const danger = confirmation.details && Array.isArray(confirmation.details.delete) && confirmation.details.delete.length > 0;
  // A write_to_file dry run (pneuma/tools/confirm.py): the diff, Apply / Reject.
  const isWrite = confirmation.kind === 'write' && confirmation.details && confirmation.details.diff && typeof confirmation.details.diff === 'object';
  return html`<div class="modal-backdrop">
    <div class=${`modal${isWrite ? ' modal-wide' : ''}`} role="dialog" aria-modal="true" aria-labelledby="confirm-title" data-kind=${confirmation.kind}>
      <h2 id="confirm-title">${kindTitle}</h2>
      <p class="modal-summary">${confirmation.summary}</p>
      ${isWrite ? html`<${DiffView} path=${confirmation.details.path} diff=${confirmation.details.diff} />` : html`<${DetailList} details=${confirmation.details} />`}
      <div class="modal-actions">
        <button class="btn" onClick=${() => shell.answerConfirmation(confirmation, false)}>${isWrite ? t('confirm.reject') : t('confirm.decline')}</button>
        <button class=${`btn ${danger ? 'danger' : 'primary'}`} ref=${approve} onClick=${() => shell.answerConfirmation(confirmation, true)}>${isWrite ? t('confirm.apply') : t('confirm.approve')}</button>
      </div>
    </div>
  </div>`;
}

/** A dialog of the chat's rendered into a root of its own on <body>:
 *  ``content(close)`` is what it shows; Escape (caught before the shell's,
 *  which stops the agent) and ``close`` remove it, then ``onClosed`` runs.
 *  Rewind's (rewind.js) and a change's revert (turn-review.js) use it. */
export function openDialogPortal(content, onClosed) {
  const root = document.createElement('div');
  root.className = 'rewind-dialog-root';
  document.body.appendChild(root);
  // Escape closes it wherever the focus is, from the moment it opens (the
  // shell's own Escape, which stops the agent, must not see this one).
  const onEscape = (e) => {
    if (e.key !== 'Escape') return;
    e.preventDefault();
    e.stopPropagation();
    close();
  };
  const close = () => {
    if (!root.isConnected) return;
    window.removeEventListener('keydown', onEscape, true);
    render(null, root);
    root.remove();
    if (onClosed) onClosed();
  };
  window.addEventListener('keydown', onEscape, true);
  render(content(close), root);
}
