// The viewer follows the agent (issue 26, item 5; docs/viewer-contract.md,
// "Follow the agent"; docs/notifications.md).
//
// When a turn changes files (`content_update` entries with origin
// "external" while the agent runs or just after its turn ended), the shell
// asks a viewer that declares "follow" to bring the changed file to the
// front. If the person is in the middle of something (text in the composer,
// a pin's comment box or an in-place edit open, a selection chip set, focus
// in an editable part of the viewer), nothing moves: a notice names what
// changed, with a Show button. The "Follow the agent" switch (a preference,
// on unless the person turned it off) stops both.

import { html } from '../vendor/preact-htm.js';
import { t } from './i18n.js';
import { preference } from './preferences.js';
import { Icon } from './shell-state.js';

// A file the watcher reports a moment after the turn's `result` (its
// debounce, a slow disk) was still written by that turn.
export const TURN_TAIL_MS = 5000;

/** Whether following is on (the person's switch; on by default). */
export function followingOn() {
  return preference('followAgent') !== false;
}

function editable(element) {
  if (!element) return false;
  if (element.isContentEditable) return true;
  const tag = String(element.tagName || '').toLowerCase();
  return tag === 'textarea' || tag === 'select' || (tag === 'input' && !['button', 'checkbox', 'radio', 'range', 'submit'].includes(element.type));
}

/** The focused element, looking into same-origin frames (a viewer's own
 *  iframes); workspace content on an opaque origin answers null there. */
function focusedElement(doc) {
  let active = doc.activeElement;
  for (let depth = 0; active && depth < 4 && String(active.tagName).toLowerCase() === 'iframe'; depth += 1) {
    let inner = null;
    try {
      inner = active.contentDocument && active.contentDocument.activeElement;
    } catch {
      inner = null;
    }
    if (!inner) break;
    active = inner;
  }
  return active;
}

// A selection that names a thing the person picked (an element, a text, a
// node, lines), as opposed to one that only says where they are (the slide
// or the section on screen, which slide and doc publish by themselves). A
// viewer can say so outright with `ambient: true` (docs/viewer-contract.md).
const PICKED_KEYS = ['text', 'tag', 'tagName', 'selector', 'element', 'elements', 'ids', 'id', 'node', 'start', 'lines'];

export function isPicked(selection) {
  if (selection == null) return false;
  if (typeof selection !== 'object') return true;
  if (selection.ambient === true || selection.auto === true) return false;
  return PICKED_KEYS.some((key) => {
    const value = selection[key];
    return value != null && value !== '' && !(Array.isArray(value) && !value.length);
  });
}

/**
 * Why the person is busy, or null: 'typing' (text in the composer), 'marked'
 * (an element of the page carries `data-pneuma-busy`: a pin's comment box, an
 * in-place edit; docs/viewer-contract.md), 'selection' (a chip names something they picked), or
 * 'editing' (focus in an editable element inside the viewer).
 */
export function personIsBusy(doc, selection) {
  const composer = doc.querySelector('.composer textarea');
  if (composer && String(composer.value || '').trim()) return 'typing';
  // `.pin-item.editing`: the review list's open comment box (lib/pins.js).
  if (doc.querySelector('[data-pneuma-busy], .pin-item.editing')) return 'marked';
  if (isPicked(selection)) return 'selection';
  const viewer = doc.querySelector('.viewer-root');
  const focused = focusedElement(doc);
  if (viewer && focused && focused !== doc.body && editable(focused)) {
    const topmost = doc.activeElement;
    if (viewer.contains(focused) || (topmost && viewer.contains(topmost))) return 'editing';
  }
  return null;
}

/** The changed files a turn wrote, in order, without deletions or repeats. */
export function agentChanges(changes) {
  const paths = [];
  for (const change of changes || []) {
    if (!change || change.origin !== 'external' || change.deleted || typeof change.path !== 'string') continue;
    if (!paths.includes(change.path)) paths.push(change.path);
  }
  return paths;
}

export class AgentFollower {
  /**
   * @param {object} o
   * @param {() => object|null} o.host      the ViewerHost (lib/viewer-host.js), or null before it exists
   * @param {() => boolean} o.running       whether the agent's turn runs now
   * @param {() => string|null} o.busy      personIsBusy(...) for this page
   * @param {() => boolean} [o.enabled]     the "Follow the agent" switch
   * @param {() => void} [o.changed]        re-render (the notice changed)
   * @param {() => number} [o.now]
   */
  constructor({ host, running, busy, enabled = followingOn, changed = () => {}, now = () => Date.now() }) {
    Object.assign(this, { host, running, busy, enabled, changed, now });
    this.turnEndedAt = -Infinity;
    this.notice = null; // {paths: [...]}: what changed while the person was busy
    this.revealed = null; // the last path brought to the front (for tests and describe)
  }

  /** Every socket message, after the store applied it. */
  receive(message) {
    if (!message) return null;
    if (message.type === 'result') this.turnEndedAt = this.now();
    if (message.type !== 'content_update') return null;
    return this.onChanges(message.files || []);
  }

  duringTurn() {
    return this.running() || this.now() - this.turnEndedAt <= TURN_TAIL_MS;
  }

  /** The changed paths the viewer shows, those it lists first. */
  candidates(paths) {
    const host = this.host();
    let listed = [];
    try {
      listed = host ? (host.items() || []).map((item) => item && item.path) : [];
    } catch {
      listed = [];
    }
    const known = paths.filter((p) => listed.includes(p));
    return [...known, ...paths.filter((p) => !known.includes(p))];
  }

  async onChanges(changes) {
    const host = this.host();
    if (!host || !this.enabled() || !host.capabilities.includes('follow')) return null;
    const paths = agentChanges(changes);
    if (!paths.length || !this.duringTurn()) return null;
    const ordered = this.candidates(paths);
    if (this.busy()) {
      const earlier = this.notice ? this.notice.paths : [];
      this.notice = { paths: [...ordered, ...earlier.filter((p) => !ordered.includes(p))] };
      this.changed();
      return 'notice';
    }
    return (await this.revealFirst(ordered)) ? 'revealed' : null;
  }

  async revealFirst(paths) {
    const host = this.host();
    for (const path of paths) {
      if (host && await host.reveal(path)) {
        this.revealed = path;
        return path;
      }
    }
    return null;
  }

  /** The notice's Show: bring what changed to the front. */
  async show() {
    const notice = this.notice;
    this.notice = null;
    this.changed();
    return notice ? this.revealFirst(notice.paths) : null;
  }

  dismiss() {
    this.notice = null;
    this.changed();
  }

  /** The switch was turned off: nothing waits to be shown either. */
  stop() {
    if (this.notice) this.dismiss();
  }
}

/** The notice above the viewer: "The agent changed slides/03.html · Show". */
export function FollowNotice({ follower }) {
  const notice = follower && follower.notice;
  if (!notice) return null;
  const [first, ...others] = notice.paths;
  const problems = (follower.host() && follower.host().problems()) || {};
  const problem = problems[first];
  return html`<div class="viewer-notice follow-notice" role="status" data-path=${first}>
    <span class="follow-text">${others.length
      ? t('attention.changedMore', { path: first, count: others.length })
      : t('attention.changed', { path: first })}${problem ? html` · <span class="follow-problem">${problem}</span>` : ''}</span>
    <button class="follow-show" onClick=${() => follower.show()}>${t('attention.show')}</button>
    <button class="chip-x" aria-label=${t('attention.dismiss')} onClick=${() => follower.dismiss()}><${Icon} name="x" size=${12} /></button>
  </div>`;
}
