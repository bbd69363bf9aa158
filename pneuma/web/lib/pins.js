// Review pins (docs/viewer-contract.md, "Annotate"): with the Annotate switch
// on, each place the person selects in a viewer that declares "annotate"
// becomes a numbered pin with a comment; "Send review" sends the open pins as
// one message (a <viewer-review> of each pin's <viewer-context> and comment,
// with the viewer's crops as images); after the agent's turn, a sent pin
// whose place changed is shown as addressed. The pins are the workspace's,
// kept by the server (GET/PUT /api/review/pins, pneuma/annotations/) and the
// same in every tab (the `review_pins` broadcast).

import { html, useEffect, useRef, useState } from '../vendor/preact-htm.js';
import { api, selectionLabel } from './viewer-host.js';
import { t } from './i18n.js';
import { Icon, hasAgent, isRunning, shell, store, ui } from './shell-state.js';
import {
  DEFAULT_REVIEW_TEXT, MAX_IMAGES, fingerprint, reviewContext as buildReview,
} from './review-message.js';

const PINS_URL = '/api/review/pins';
const MAX_PLACE_CHARS = 4_096;
// A viewer may render its crops elsewhere (webcraft's server starts a
// browser for the first): each may take a while, the review as a whole not.
const CAPTURE_TIMEOUT_MS = 15_000;
const CAPTURES_TIMEOUT_MS = 30_000;
// File changes the watcher reports just after a turn's result still count
// as the turn's (its last write may trail the result by a debounce).
const TURN_TAIL_MS = 5_000;

export const pins = {
  list: [],
  revision: 0,
  annotating: false,
  editing: null, // the id of the pin whose comment box is open
  draft: null, // {id, text}: what the open comment box holds, not yet saved
  fresh: null, // the id of a pin just made, removed if its box is cancelled empty
  sending: false,
  problem: null,
  saving: 0, // PUTs in flight: broadcasts are not adopted meanwhile
  // Whether the workspace's pins came (the first GET answered). Before, a
  // PUT of the whole list would replace pins the page has not seen yet.
  loaded: false,
  turnEndedAt: 0,
  attached: false,
};

function instance() {
  return ui.host && ui.host.instance;
}

/** True when the mounted viewer declares "annotate" in its capabilities. */
export function canAnnotate() {
  const module = ui.host && ui.host.ready && !ui.host.generic ? ui.host.module : null;
  return !!(module && Array.isArray(module.capabilities) && module.capabilities.includes('annotate'));
}

function callViewer(name, ...args) {
  const target = instance();
  if (!target || typeof target[name] !== 'function') return undefined;
  try {
    return target[name](...args);
  } catch (error) {
    console.error(`pneuma: the viewer's ${name} failed`, error);
    return undefined;
  }
}

function showPins() {
  if (canAnnotate()) callViewer('showPins', pins.list.map((pin) => ({ ...pin })));
}

function newId() {
  return (crypto.randomUUID && crypto.randomUUID()) || `pin-${Date.now()}-${Math.random().toString(36).slice(2)}`;
}

/** The pinned place's fingerprint: the viewer's pinPlace, else its file's content. */
async function placeOf(selection) {
  const files = ui.host ? ui.host.files : [];
  const target = instance();
  if (target && typeof target.pinPlace === 'function') {
    try {
      const place = await target.pinPlace(selection, files);
      return place == null ? null : String(place).slice(0, MAX_PLACE_CHARS);
    } catch (error) {
      console.error("pneuma: the viewer's pinPlace failed", error);
      return null;
    }
  }
  const path = selection && typeof selection === 'object' ? selection.file || selection.path : null;
  const file = path ? files.find((f) => f.path === path) : null;
  return file && typeof file.content === 'string' ? fingerprint(file.content) : null;
}

// --- the server's copy ------------------------------------------------------

function adopt(body) {
  if (!body || !Array.isArray(body.pins)) return;
  pins.list = body.pins;
  pins.revision = body.revision || 0;
  if (pins.editing && !pins.list.some((p) => p.id === pins.editing)) pins.editing = null;
  showPins();
  store.notify();
}

async function load() {
  try {
    const body = await api.json(PINS_URL);
    // Pins made while the answer was on its way join the workspace's.
    const stored = body && Array.isArray(body.pins) ? body.pins : [];
    const ids = new Set(stored.map((p) => p.id));
    const made = pins.list.filter((p) => !ids.has(p.id));
    adopt({ ...body, pins: [...stored, ...made] });
    pins.loaded = true;
    if (made.length) save(pins.list);
  } catch (error) {
    pins.loaded = true;
    pins.problem = t('pins.loadFailed', { message: error.message });
    store.notify();
  }
}

let saving = Promise.resolve();

/** Show `list` at once and store it; writes go one after another. */
function save(list) {
  pins.list = list.map((pin, index) => ({ ...pin, number: index + 1 }));
  pins.problem = null;
  showPins();
  store.notify();
  if (!pins.loaded) return saving; // stored with the workspace's once they come (load)
  pins.saving += 1;
  const body = { pins: pins.list };
  saving = saving.then(async () => {
    try {
      const stored = await api.json(PINS_URL, { method: 'PUT', json: body });
      if (pins.saving === 1) adopt(stored);
    } catch (error) {
      pins.problem = t('pins.saveFailed', { message: error.message });
    } finally {
      pins.saving -= 1;
      store.notify();
    }
  });
  return saving;
}

function update(id, change) {
  return save(pins.list.map((pin) => (pin.id === id ? { ...pin, ...change } : pin)));
}

// --- what the page does -------------------------------------------------------

/** Mount-time: load the workspace's pins and give them to the viewer. */
export function attachPins() {
  if (pins.attached) return;
  pins.attached = true;
  window.addEventListener('keydown', onEscape, true); // before the shell's own Esc (app.js)
  load();
}

/**
 * ctx.setSelection while annotating: the selection becomes a new pin with
 * its comment box open. Returns true when it was taken (no chip then).
 */
export function takeSelection(selection) {
  if (!pins.annotating || selection == null || !canAnnotate()) return false;
  // A selection the viewer set by itself, not at the person's click, stays a chip.
  if (typeof selection === 'object' && selection.auto === true) return false;
  const same = JSON.stringify(selection);
  const pinned = pins.list.find((p) => p.status === 'open' && JSON.stringify(p.selection) === same);
  if (pinned) { // the same place again: its comment, not a second pin
    pins.editing = pinned.id;
    pins.draft = null;
    store.notify();
    return true;
  }
  const pin = { id: newId(), selection, comment: '', status: 'open', place: null, created: Date.now() / 1000 };
  pins.editing = pin.id;
  pins.fresh = pin.id;
  save([...pins.list, pin]);
  // The marker shows the place now; the viewer's own highlight would read
  // as a selection still waiting (and a second click would undo it).
  queueMicrotask(() => ui.host && ui.host.clearSelection());
  placeOf(selection).then((place) => {
    if (place != null && pins.list.some((p) => p.id === pin.id)) update(pin.id, { place });
  });
  return true;
}

export function setAnnotating(on) {
  const was = pins.annotating;
  pins.annotating = !!on && canAnnotate();
  if (!pins.annotating) closeBox();
  // Optional in the contract: a viewer that points only in a mode of its own
  // (webcraft's Select) may enter it with annotating.
  if (was !== pins.annotating) callViewer('setAnnotating', pins.annotating);
  store.notify();
}

function closeBox() {
  const fresh = pins.list.find((p) => p.id === pins.fresh);
  pins.editing = null;
  pins.fresh = null;
  pins.draft = null;
  if (fresh && !fresh.comment.trim()) save(pins.list.filter((p) => p.id !== fresh.id));
}

function onEscape(event) {
  if (event.key !== 'Escape' || event.defaultPrevented) return;
  if (pins.editing) {
    event.preventDefault(); // not an interrupt of the agent
    closeBox();
    store.notify();
  } else if (pins.annotating) {
    event.preventDefault();
    setAnnotating(false);
  }
}

export function removePin(id) {
  if (pins.editing === id) pins.editing = null;
  save(pins.list.filter((p) => p.id !== id));
}

export async function reopenPin(id) {
  const pin = pins.list.find((p) => p.id === id);
  if (!pin) return;
  // From now on the place is compared with what it is now.
  update(id, { status: 'open', place: await placeOf(pin.selection) });
}

export function clearAddressed() {
  save(pins.list.filter((p) => p.status !== 'addressed'));
}

export function revealPin(id) {
  const pin = pins.list.find((p) => p.id === id);
  if (pin) Promise.resolve(callViewer('revealPin', { ...pin })).catch((error) => console.error(error));
}

/** After a turn: each sent pin whose place changed is addressed. */
async function markAddressed() {
  const sent = pins.list.filter((p) => p.status === 'sent');
  if (!sent.length) return;
  const changed = new Set();
  for (const pin of sent) {
    const now = await placeOf(pin.selection);
    if (now !== pin.place) changed.add(pin.id);
  }
  if (changed.size) {
    save(pins.list.map((p) => (changed.has(p.id) && p.status === 'sent' ? { ...p, status: 'addressed' } : p)));
  }
}

/** The shell's socket messages that concern the pins (called from app.js). */
export function pinsReceive(message) {
  if (message.type === 'review_pins') {
    if (pins.loaded && pins.saving === 0 && (message.revision || 0) >= pins.revision) adopt(message);
  } else if (message.type === 'content_update') {
    setTimeout(showPins, 0); // after the viewer has drawn the new files (app.js)
    // Also after: the places are read from the viewer's files, which app.js
    // gives it once this returns. Read now, a change that came after the
    // turn's result (a loaded machine) was compared with the old text and
    // its pin stayed "sent".
    if (!isRunning() && Date.now() - pins.turnEndedAt < TURN_TAIL_MS) setTimeout(markAddressed, 0);
  } else if (message.type === 'result') {
    pins.turnEndedAt = Date.now();
    markAddressed();
  }
}

// --- the review message ---------------------------------------------------------

/** What the mounted viewer gives a review (lib/review-message.js). */
function reviewSource(host) {
  const module = host && host.module;
  return {
    extract: module && typeof module.extractContext === 'function'
      ? (selection) => module.extractContext(selection, host.files) : null,
    modeName: host && host.mode ? host.mode.name : '',
    label: selectionLabel,
  };
}

/** The <viewer-review> of `list` for the viewer `host` shows, and the pins it holds. */
export function reviewContext(list, host) {
  return buildReview(list, reviewSource(host));
}

function withTimeout(promise, ms) {
  return Promise.race([promise, new Promise((resolve) => setTimeout(() => resolve(null), ms))]);
}

async function captures(list) {
  const images = [];
  const deadline = Date.now() + CAPTURES_TIMEOUT_MS;
  for (const pin of list) {
    const left = Math.min(CAPTURE_TIMEOUT_MS, deadline - Date.now());
    if (images.length >= MAX_IMAGES || left <= 0) break;
    let url = null;
    try {
      url = await withTimeout(Promise.resolve(callViewer('capturePin', { ...pin })), left);
    } catch (error) {
      console.error("pneuma: the viewer's capturePin failed", error);
    }
    const match = typeof url === 'string' && /^data:(image\/(?:png|jpeg|gif|webp));base64,(.+)$/s.exec(url);
    if (match) images.push({ media_type: match[1], data: match[2], url, name: t('pins.captureName', { number: pin.number }) });
  }
  return images;
}

/** The composer's draft (lib/composer.js keeps it in its own state). */
function composerField() {
  return document.querySelector('.composer textarea');
}

/** The open comment box's text is kept, as Save would. */
function commitDraft() {
  const draft = pins.draft;
  pins.editing = null;
  pins.fresh = null;
  pins.draft = null;
  if (draft && pins.list.some((p) => p.id === draft.id)) {
    return update(draft.id, { comment: draft.text.trim() ? draft.text : '' });
  }
  return null;
}

export async function sendReview() {
  if (pins.sending || !hasAgent()) return false;
  if (!commitDraft()) closeBox();
  const open = pins.list.filter((p) => p.status === 'open');
  if (!open.length) return false;
  pins.sending = true;
  store.notify();
  try {
    const { text: context, included } = reviewContext(open, ui.host);
    const images = await captures(included);
    const field = composerField();
    const draft = field ? field.value.trim() : '';
    if (!shell.send(draft || DEFAULT_REVIEW_TEXT, images, context)) return false;
    if (field && draft) {
      field.value = '';
      field.dispatchEvent(new Event('input', { bubbles: true }));
    }
    const sent = new Set(included.map((p) => p.id));
    await save(pins.list.map((p) => (sent.has(p.id) ? { ...p, status: 'sent' } : p)));
    setAnnotating(false);
    return true;
  } finally {
    pins.sending = false;
    store.notify();
  }
}

// --- what the page shows -------------------------------------------------------------

function PinIcon({ size = 14 }) {
  return html`<svg class="icon" width=${size} height=${size} viewBox="0 0 24 24" aria-hidden="true" fill="none"
    stroke="currentColor" stroke-width="1.8" stroke-linecap="round" stroke-linejoin="round">
    <path d="M12 21s-6-5.3-6-10a6 6 0 0 1 12 0c0 4.7-6 10-6 10z" /><circle cx="12" cy="11" r="2.2" /></svg>`;
}

/** The Annotate switch over the viewer (only for a viewer that declares "annotate"). */
export function AnnotateSwitch() {
  if (!canAnnotate()) return null;
  const on = pins.annotating;
  return html`<div class=${`annotate-switch${on ? ' on' : ''}`}>
    ${on && html`<span class="annotate-hint">${t('pins.hint')}</span>`}
    <button class="annotate-toggle" role="switch" aria-checked=${on ? 'true' : 'false'}
      title=${on ? t('pins.stopTitle') : t('pins.startTitle')} onClick=${() => setAnnotating(!on)}>
      <${PinIcon} size=${14} /><span>${t('pins.annotate')}</span></button>
  </div>`;
}

function CommentBox({ pin }) {
  // What was typed survives the box being drawn anew (the list redrawn by a
  // late answer or another tab's change): the draft, else the saved comment.
  const draft = pins.draft && pins.draft.id === pin.id ? pins.draft.text : null;
  const [text, setText] = useState(draft ?? (pin.comment || ''));
  const field = useRef(null);
  useEffect(() => { if (field.current) field.current.focus(); }, []);
  const commit = () => {
    // What the field holds now: Enter can come before the render that
    // would give this closure the last input's text (a loaded machine).
    pins.draft = { id: pin.id, text: field.current ? field.current.value : text };
    commitDraft();
  };
  const onKeyDown = (e) => {
    if (e.key === 'Enter' && !e.shiftKey && !e.isComposing) {
      e.preventDefault();
      commit();
    }
  };
  // data-pneuma-busy: the person is in the middle of something (lib/follow.js).
  return html`<div class="pin-box" data-pneuma-busy="">
    <textarea ref=${field} rows="2" value=${text} maxlength="10000" placeholder=${t('pins.commentPlaceholder')}
      aria-label=${t('pins.commentLabel', { number: pin.number })}
      onInput=${(e) => { setText(e.target.value); pins.draft = { id: pin.id, text: e.target.value }; }} onKeyDown=${onKeyDown} />
    <div class="pin-box-actions">
      <span class="pin-box-hint">${t('pins.commentHint')}</span>
      <button class="pin-btn" onClick=${() => { closeBox(); store.notify(); }}>${t('pins.cancel')}</button>
      <button class="pin-btn primary" onClick=${commit}>${t('pins.save')}</button>
    </div>
  </div>`;
}

function PinRow({ pin }) {
  const editing = pins.editing === pin.id;
  const status = pin.status === 'addressed' ? t('pins.addressed') : pin.status === 'sent' ? t('pins.sent') : '';
  return html`<li class=${`pin-item status-${pin.status}${editing ? ' editing' : ''}`} data-pin-id=${pin.id}
      data-pin-number=${pin.number} data-status=${pin.status}>
    <div class="pin-row">
      <button class="pin-number" title=${t('pins.reveal')} onClick=${() => revealPin(pin.id)}>
        ${pin.status === 'addressed' ? html`<svg class="icon" width="12" height="12" viewBox="0 0 24 24" aria-hidden="true" fill="none" stroke="currentColor" stroke-width="3" stroke-linecap="round" stroke-linejoin="round"><path d="M5 12.5l4.5 4.5L19 7.5" /></svg>` : pin.number}
      </button>
      <div class="pin-body" role="button" tabindex="0" title=${t('pins.reveal')} onClick=${() => revealPin(pin.id)}
        onKeyDown=${(e) => { if (e.key === 'Enter' || e.key === ' ') { e.preventDefault(); revealPin(pin.id); } }}>
        <span class="pin-where">${selectionLabel(pin.selection)}</span>
        ${!editing && html`<span class=${`pin-comment${pin.comment ? '' : ' no-comment'}`}>${pin.comment || t('pins.noComment')}</span>`}
      </div>
      ${status && html`<span class=${`pin-status ${pin.status}`}>${status}</span>`}
      <div class="pin-actions">
        ${pin.status === 'addressed' || pin.status === 'sent'
          ? html`<button class="pin-icon-btn pin-reopen" title=${t('pins.reopen')} aria-label=${t('pins.reopen')} onClick=${() => reopenPin(pin.id)}>
              <svg class="icon" width="13" height="13" viewBox="0 0 24 24" aria-hidden="true" fill="none" stroke="currentColor" stroke-width="1.9" stroke-linecap="round" stroke-linejoin="round"><path d="M4 12a8 8 0 1 0 2.3-5.6M4 4v4h4" /></svg></button>`
          : html`<button class="pin-icon-btn pin-edit" title=${t('pins.edit')} aria-label=${t('pins.edit')} onClick=${() => { pins.editing = pin.id; pins.draft = null; store.notify(); }}>
              <svg class="icon" width="13" height="13" viewBox="0 0 24 24" aria-hidden="true" fill="none" stroke="currentColor" stroke-width="1.9" stroke-linecap="round" stroke-linejoin="round"><path d="M4 20h4L19 9l-4-4L4 16zM13.5 6.5l4 4" /></svg></button>`}
        <button class="pin-icon-btn pin-remove" title=${t('pins.remove')} aria-label=${t('pins.remove')} onClick=${() => removePin(pin.id)}><${Icon} name="x" size=${13} /></button>
      </div>
    </div>
    ${editing && html`<${CommentBox} key=${pin.id} pin=${pin} />`}
  </li>`;
}

/** The numbered review list beside the composer. */
export function ReviewList() {
  if (!pins.list.length && !pins.problem) return null;
  const open = pins.list.filter((p) => p.status === 'open').length;
  const addressed = pins.list.filter((p) => p.status === 'addressed').length;
  return html`<section class="review-list" aria-label=${t('pins.title')}>
    <header class="review-head">
      <${PinIcon} size=${14} />
      <span class="review-title">${t('pins.title')}</span>
      <span class="review-count">${t('pins.count', { count: pins.list.length })}</span>
      <span class="review-spacer" />
      ${addressed > 0 && html`<button class="pin-btn review-clear" onClick=${clearAddressed}>${t('pins.clearAddressed')}</button>`}
      <button class="pin-btn primary review-send" disabled=${!open || pins.sending || !hasAgent()}
        title=${t('pins.sendTitle')} onClick=${() => sendReview()}>
        <${Icon} name="send" size=${12} /><span>${pins.sending ? t('pins.sending') : open ? t('pins.send', { count: open }) : t('pins.sendNone')}</span></button>
    </header>
    ${pins.problem && html`<div class="review-problem">${pins.problem}</div>`}
    <ol class="pin-list">${pins.list.map((pin) => html`<${PinRow} key=${pin.id} pin=${pin} />`)}</ol>
  </section>`;
}
