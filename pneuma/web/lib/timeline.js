// The timeline under the viewer (docs/checkpoints.md, "Compare and the
// timeline"): one tick per checkpoint the workspace keeps (GET
// /api/checkpoints), and "now" at the end. Choosing a tick, or scrubbing
// along the bar (pointer or arrow keys), shows the workspace as it was at that
// point, before that turn, drawn by the mode's own viewer read-only over the
// live one (lib/compare.js's SnapshotViewer: read from the checkpoint store,
// nothing restored). "Back to now" (or Escape) returns to the live viewer;
// "Restore this" runs the rewind flow of the chat, with the same confirmation
// as "Rewind to here" (lib/rewind.js).

import { html, useState, useEffect, useRef } from '../vendor/preact-htm.js';
import { h, fetchJson } from './viewer-helpers.js';
import { t } from './i18n.js';
import { SnapshotViewer, keepSessionStorage } from './compare.js';
import { openRewindDialog } from './rewind.js';

// The messages after which the list of checkpoints has changed.
const CHANGES_LIST = new Set(['turn_checkpoint', 'turn_changes', 'workspace_restored', 'conversation_switched']);
// A pause in the scrubbing before the point under the pointer is drawn.
const SCRUB_SETTLE_MS = 120;

const listeners = new Set();

/** A socket message (app.js): the bar reloads its ticks when they changed. */
export function timelineReceive(message) {
  if (!message || !CHANGES_LIST.has(message.type)) return;
  for (const listener of [...listeners]) listener(message);
}

/** What a tick says: "Before turn 3", or "Before rewind u1" for an undo point. */
export function tickLabel(row) {
  return row.kind === 'undo' ? t('timeline.beforeRestore', { ref: row.ref }) : t('timeline.beforeTurn', { turn: row.ref });
}

/** Where tick `index` of `count` (the last is "now") sits along the bar, in %. */
export function tickPosition(index, count) {
  return count <= 1 ? 100 : (index / (count - 1)) * 100;
}

/** The tick nearest to `fraction` (0..1) of the bar, for `count` ticks. */
export function nearestTick(fraction, count) {
  if (count <= 1) return 0;
  return Math.max(0, Math.min(count - 1, Math.round(fraction * (count - 1))));
}

/** One side of a checkpoint drawn over the live viewer, until closed. */
class PointView {
  constructor({ host, panel, ref }) {
    this.putBack = keepSessionStorage();
    this.body = h('div', { class: 'compare-viewer' });
    this.root = h('div', { class: 'timeline-view', 'data-ref': ref, role: 'region',
      'aria-label': t('timeline.viewing', { point: ref }) }, this.body);
    panel.append(this.root);
    this.viewer = new SnapshotViewer({ host, ref, side: 'before', element: this.body });
    this.ready = this.viewer.start().then(() => {
      if (this.root.isConnected) this.root.dataset.ready = 'true';
    });
  }

  close() {
    this.viewer.destroy();
    this.root.remove();
    this.putBack();
  }
}

export function Timeline({ host, panel }) {
  const [rows, setRows] = useState(null); // null: not loaded, or no checkpoints kept
  const [at, setAt] = useState(null); // the ref shown, null for now
  const view = useRef(null);
  const settle = useRef(null);
  const track = useRef(null);

  const load = () => fetchJson('/api/checkpoints')
    .then((body) => setRows(body.checkpoints || []))
    .catch(() => setRows(null));

  useEffect(() => {
    load();
    const onMessage = (message) => {
      load();
      if (message.type === 'workspace_restored' || message.type === 'conversation_switched') setAt(null);
    };
    listeners.add(onMessage);
    return () => listeners.delete(onMessage);
  }, []);

  // Draw the point chosen (and only the newest choice), or go back to now.
  useEffect(() => {
    if (view.current) {
      view.current.close();
      view.current = null;
    }
    const live = host();
    const where = panel();
    if (at == null || !live || !where) return undefined;
    view.current = new PointView({ host: live, panel: where, ref: at });
    return undefined;
  }, [at]);

  useEffect(() => {
    if (at == null) return undefined;
    const onKey = (e) => {
      if (e.key !== 'Escape' || document.querySelector('.rewind-dialog-root, .compare-panel')) return;
      e.preventDefault();
      e.stopPropagation();
      setAt(null);
    };
    window.addEventListener('keydown', onKey, true);
    return () => window.removeEventListener('keydown', onKey, true);
  }, [at]);

  // A point the store no longer keeps (pruned past its bounds): back to now.
  useEffect(() => {
    if (at != null && rows && !rows.some((r) => r.ref === at)) setAt(null);
  }, [rows]);

  useEffect(() => () => view.current && view.current.close(), []);

  if (!rows || !rows.length) return null;
  const count = rows.length + 1; // and "now"
  const index = at == null ? rows.length : rows.findIndex((r) => r.ref === at);
  const choose = (i) => setAt(i >= rows.length || i < 0 ? null : rows[i].ref);
  const scrubTo = (clientX) => {
    const box = track.current.getBoundingClientRect();
    const i = nearestTick((clientX - box.left) / Math.max(1, box.width), count);
    clearTimeout(settle.current);
    settle.current = setTimeout(() => choose(i), SCRUB_SETTLE_MS);
  };
  const onPointerDown = (e) => {
    if (e.button !== 0) return;
    track.current.setPointerCapture(e.pointerId);
    scrubTo(e.clientX);
  };
  const onPointerMove = (e) => {
    if (track.current.hasPointerCapture(e.pointerId)) scrubTo(e.clientX);
  };
  const onKeyDown = (e) => {
    const step = { ArrowLeft: -1, ArrowRight: 1, Home: -count, End: count }[e.key];
    if (step == null) return;
    e.preventDefault();
    choose(Math.max(0, Math.min(count - 1, index + step)));
  };
  const row = at == null ? null : rows[index];
  const valueText = row ? `${tickLabel(row)}: ${row.message || ''}` : t('timeline.now');
  return html`<div class=${`timeline${at != null ? ' viewing' : ''}`} role="group" aria-label=${t('timeline.label')}>
    <span class="timeline-label">${t('timeline.label')}</span>
    <div class="timeline-track" ref=${track} role="slider" tabindex="0" aria-label=${t('timeline.scrub')}
      aria-valuemin="0" aria-valuemax=${count - 1} aria-valuenow=${index} aria-valuetext=${valueText}
      onPointerDown=${onPointerDown} onPointerMove=${onPointerMove} onKeyDown=${onKeyDown}>
      <div class="timeline-line" />
      ${rows.map((r, i) => html`<span key=${r.ref} class=${`timeline-tick${r.kind === 'undo' ? ' undo' : ''}${i === index ? ' current' : ''}`}
        data-ref=${r.ref} style=${`left: ${tickPosition(i, count)}%`} title=${`${tickLabel(r)} · ${r.message || ''} · ${r.time || ''}`} />`)}
      <span class=${`timeline-tick now${at == null ? ' current' : ''}`} data-ref="now"
        style=${`left: ${tickPosition(count - 1, count)}%`} title=${t('timeline.now')} />
    </div>
    ${row ? html`<span class="timeline-status" title=${row.message || ''}>${tickLabel(row)}</span>
      <button class="btn timeline-restore" onClick=${() => openRewindDialog(row.ref)}
        title=${t('timeline.restoreTitle')}>${t('timeline.restore')}</button>
      <button class="btn timeline-now" onClick=${() => setAt(null)}>${t('timeline.backToNow')}</button>`
    : html`<span class="timeline-status muted">${t('timeline.now')}</span>`}
  </div>`;
}
