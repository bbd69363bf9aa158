// Replay (docs/sharing.md, "Replay"): the conversation shown, played back
// turn by turn over the viewer. For each turn the panel shows the
// conversation up to it (the person's message, the agent's answers, the
// tools it used) beside the work as that turn left it, drawn by the mode's
// own viewer read-only from the checkpoint store (lib/compare.js's
// SnapshotViewer over GET /api/checkpoints/{ref}/state/after/…: nothing is
// restored, nothing written). It plays at 0.5×–4×, pauses, and seeks with a
// slider over the turns. "Continue from here" on turn N goes back to just
// before turn N+1 on a new branch of the conversation, its files as turn N
// left them: the rewind dialog of the chat (lib/rewind.js), files and
// conversation both. The turns come from GET /api/replay (pneuma/replay/).

import { html, render, useState, useEffect, useRef } from '../vendor/preact-htm.js';
import { h, fetchJson } from './viewer-helpers.js';
import { t } from './i18n.js';
import { renderMarkdown } from './markdown.js';
import { SnapshotViewer, keepSessionStorage } from './compare.js';
import { openRewindDialog } from './rewind.js';
import { changeText } from './turn-review.js';
import { SPEEDS, continuePoint, drawnTurn, nextTurn, turnDelay } from './replay-steps.js';

let openPanel = null; // {close}

/** Close the Replay panel, if one is open. */
export function closeReplay() {
  if (openPanel) openPanel.close();
}

/** Open Replay over `panel` (the viewer's section) with the live ViewerHost `host`. */
export function openReplay({ host, panel, speed = 1 }) {
  closeReplay();
  const root = h('div', { class: 'replay-root' });
  panel.append(root);
  const putBack = keepSessionStorage();
  const close = () => {
    if (openPanel !== current) return;
    openPanel = null;
    render(null, root);
    root.remove();
    putBack();
  };
  const current = { close };
  openPanel = current;
  render(html`<${ReplayPanel} host=${host} close=${close} initialSpeed=${speed} />`, root);
  return current;
}

/** One turn's files drawn by the viewer, kept until the next is drawn. */
class TurnView {
  constructor({ host, holder, ref, turn }) {
    this.body = h('div', { class: 'compare-viewer' });
    this.root = h('div', { class: 'replay-frame', 'data-ref': ref, 'data-turn': String(turn) }, this.body);
    holder.append(this.root);
    this.viewer = new SnapshotViewer({ host, ref, side: 'after', element: this.body });
    this.ready = this.viewer.start().then(() => this);
  }

  close() {
    this.viewer.destroy();
    this.root.remove();
  }
}

function Transcript({ turns, index }) {
  const list = useRef(null);
  useEffect(() => {
    const current = list.current && list.current.querySelector('.replay-turn.current');
    if (current && current.scrollIntoView) current.scrollIntoView({ block: 'nearest' });
  }, [index]);
  return html`<ol class="replay-transcript" ref=${list} aria-label=${t('replay.transcript')}>
    ${turns.slice(0, index + 1).map((turn, i) => html`<li key=${turn.index}
        class=${`replay-turn${i === index ? ' current' : ''}`} data-turn=${turn.index}>
      <div class="replay-user"><span class="replay-who">${t('replay.you')}</span>${turn.text}</div>
      ${turn.replies.map((reply) => html`<div class="replay-reply md" dangerouslySetInnerHTML=${{ __html: renderMarkdown(reply) }} />`)}
      ${turn.changes && turn.changes.length > 0 && html`<ul class="replay-changes" aria-label=${t('replay.changes')}>
        ${turn.changes.map((change) => html`<li>${changeText(change)}</li>`)}</ul>`}
      ${turn.tools.length > 0 && html`<div class="replay-tools">${t('replay.tools', { tools: [...new Set(turn.tools)].join(', ') })}</div>`}
    </li>`)}
  </ol>`;
}

function ReplayPanel({ host, close, initialSpeed }) {
  const [data, setData] = useState(null);
  const [problem, setProblem] = useState(null);
  const [index, setIndex] = useState(0);
  const [playing, setPlaying] = useState(true);
  const [speed, setSpeed] = useState(initialSpeed);
  const [drawnAt, setDrawnAt] = useState(null); // the turn whose frame is drawn, once drawn
  const holder = useRef(null);
  const view = useRef(null); // the frame of the turn chosen last
  const frames = useRef(new Set()); // every frame mounted and not yet closed
  const timer = useRef(null);
  const shownIndex = useRef(0); // the turn chosen now, for a frame that becomes ready later
  shownIndex.current = index;
  const turns = (data && data.turns) || [];

  useEffect(() => {
    fetchJson('/api/replay').then(setData).catch((error) => setProblem(error.message));
    const onKey = (e) => {
      if (e.key !== 'Escape' || document.querySelector('.rewind-dialog-root')) return;
      e.preventDefault();
      e.stopPropagation();
      close();
    };
    window.addEventListener('keydown', onKey, true);
    return () => {
      window.removeEventListener('keydown', onKey, true);
      clearTimeout(timer.current);
      for (const frame of frames.current) frame.close();
    };
  }, []);

  // Draw the turn's files; the one drawn before stays until this one is ready.
  useEffect(() => {
    if (!turns.length || !holder.current) return;
    const at = drawnTurn(turns, index);
    const ref = at == null ? null : turns[at].ref;
    if (view.current && view.current.root.dataset.ref === ref) {
      // The same files as the turn drawn (a turn that changed nothing): drawn already, or soon.
      view.current.root.dataset.turn = String(index + 1);
      if (view.current.root.dataset.ready === 'true') setDrawnAt(index);
      return;
    }
    if (ref == null) {
      for (const frame of frames.current) frame.close();
      frames.current = new Set();
      view.current = null;
      setDrawnAt(index);
      return;
    }
    const next = new TurnView({ host, holder: holder.current, ref, turn: index + 1 });
    frames.current.add(next);
    view.current = next;
    next.ready.then(() => {
      if (view.current !== next) return; // a later turn was chosen meanwhile
      for (const frame of frames.current) if (frame !== next) frame.close();
      frames.current = new Set([next]);
      next.root.dataset.ready = 'true';
      next.root.dataset.turn = String(shownIndex.current + 1);
      setDrawnAt(shownIndex.current);
    });
  }, [data, index]);

  // Playing: the next turn once this one has been on screen for its time.
  useEffect(() => {
    clearTimeout(timer.current);
    if (!playing || drawnAt !== index) return undefined;
    const following = nextTurn(index, turns.length);
    if (following == null) {
      setPlaying(false);
      return undefined;
    }
    timer.current = setTimeout(() => setIndex(following), turnDelay(speed));
    return () => clearTimeout(timer.current);
  }, [playing, drawnAt, index, speed]);

  const seek = (i) => setIndex(Math.max(0, Math.min(turns.length - 1, i)));
  const point = continuePoint(turns, index);
  const goOn = async () => {
    if (!point) return close();
    if (point.ref) {
      setPlaying(false);
      openRewindDialog(point.ref, () => {}, { clientId: point.clientId, timestamp: point.timestamp });
      chooseBoth();
      return undefined;
    }
    // A turn without a checkpoint: the conversation alone goes back.
    const body = point.clientId ? { clientMsgId: point.clientId } : { timestamp: point.timestamp * 1000 };
    try {
      await fetchJson('/api/conversation/rewind', { method: 'POST', json: body });
      close();
    } catch (error) {
      setProblem(error.message);
    }
    return undefined;
  };
  const turn = turns[index];
  const status = !data ? t('replay.loading')
    : !turns.length ? t('replay.empty')
      : t('replay.turnOf', { turn: index + 1, turns: turns.length });
  return html`<div class="replay-panel" role="region" aria-label=${t('replay.label')}
      data-turn=${turn ? index + 1 : ''} data-playing=${playing ? 'true' : 'false'}>
    <div class="replay-bar">
      <strong class="replay-title">${t('replay.label')}</strong>
      <button class="btn replay-play" disabled=${!turns.length} onClick=${() => {
        if (!playing && nextTurn(index, turns.length) == null) setIndex(0);
        setPlaying(!playing);
      }}>${playing ? t('replay.pause') : t('replay.play')}</button>
      <label class="replay-speed">${t('replay.speed')}
        <select value=${String(speed)} onChange=${(e) => setSpeed(Number(e.target.value))}>
          ${SPEEDS.map((s) => html`<option value=${String(s)}>${s}×</option>`)}
        </select></label>
      <input class="replay-seek" type="range" min="1" max=${Math.max(1, turns.length)} step="1"
        value=${index + 1} disabled=${turns.length < 2} aria-label=${t('replay.seek')}
        aria-valuetext=${status} onInput=${(e) => seek(Number(e.target.value) - 1)} />
      <span class="replay-status">${status}</span>
      <button class="btn replay-continue" disabled=${!turns.length}
        title=${point ? t('replay.continueTitle') : t('replay.continueLastTitle')}
        onClick=${goOn}>${t('replay.continue')}</button>
      <button class="btn replay-close" onClick=${close}>${t('replay.close')}</button>
    </div>
    ${data && data.imported && html`<div class="replay-note" role="note">${t('replay.imported', { file: data.imported })}</div>`}
    ${problem && html`<div class="replay-note error" role="alert">${problem}</div>`}
    <div class="replay-body">
      <div class="replay-view" ref=${holder}>
        ${turn && drawnTurn(turns, index) == null && html`<div class="replay-none">${t('replay.noFiles')}</div>`}
      </div>
      <${Transcript} turns=${turns} index=${index} />
    </div>
  </div>`;
}

/** Continuing from a turn takes the conversation back as well as the
 *  files: the rewind dialog opens on "Both" (the person may still pick one). */
function chooseBoth(tries = 30) {
  const choice = document.querySelector('.rewind-dialog .rewind-choice-item[data-choice="both"] input');
  if (choice && !choice.disabled) {
    if (!choice.checked) choice.click();
    return;
  }
  if (tries > 0) requestAnimationFrame(() => chooseBoth(tries - 1));
}

/** The "Replay" button over the viewer (app.js). */
export function ReplayButton({ host, panel }) {
  return html`<div class="replay-entry">
    <button class="replay-open" title=${t('replay.openTitle')}
      onClick=${() => host() && panel() && openReplay({ host: host(), panel: panel() })}>${t('replay.open')}</button>
  </div>`;
}
