// Know when to step in (issue 26, item 4; docs/notifications.md).
//
// While the tab is hidden, what asks for the person (a turn ended, a turn
// failed, a permission or a question waits) raises a browser notification,
// counts in the title's badge ("(2) Slides · Pneuma") until the tab is seen
// again, and, if the person wants it, plays a short tone (WebAudio, no
// file). The browser's permission is asked for once, when the person first
// sends a message or turns the switch on, never at page load. The headless
// viewer the server drives for the agent (lib/headless-client.js) never
// notifies.

import { t } from './i18n.js';
import { preference, setPreference } from './preferences.js';

// Tools whose permission request is really a question to the person
// (the question cards of lib/question-cards.js draw them).
export const QUESTION_TOOLS = ['AskUserQuestion', 'ExitPlanMode'];

/** The page is the server's own headless viewer: it must never notify. */
export function isHeadlessClient(doc, search) {
  const root = doc && doc.documentElement;
  if (root && root.dataset && root.dataset.client === 'headless') return true;
  try {
    return new URLSearchParams(search || '').get('client') === 'headless';
  } catch {
    return false;
  }
}

/** What a socket message asks of the person, or null:
 *  {kind: 'turnEnded'|'turnFailed'|'permission'|'question', tool?}. */
export function classify(message) {
  if (!message) return null;
  if (message.type === 'result') {
    const data = message.data || {};
    const failed = data.is_error === true || String(data.subtype || '').startsWith('error');
    return { kind: failed ? 'turnFailed' : 'turnEnded' };
  }
  if (message.type === 'permission_request') {
    const request = message.request || {};
    const tool = String(request.tool_name || request.display_name || '');
    const question = QUESTION_TOOLS.includes(tool) || request.kind === 'question' || request.kind === 'plan';
    return { kind: question ? 'question' : 'permission', tool };
  }
  if (message.type === 'cli_disconnected' && message.exit_code != null && message.exit_code !== 0) {
    return { kind: 'turnFailed' };
  }
  return null;
}

const TITLES = {
  turnEnded: 'attention.turnEnded',
  turnFailed: 'attention.turnFailed',
  permission: 'attention.permission',
  question: 'attention.question',
};

/** Whether the person wants notifications and the browser lets us show them. */
export function notificationsOn(win) {
  const api = win && win.Notification;
  return preference('notifications') !== false && !!api && api.permission === 'granted';
}

export class Notifier {
  /**
   * @param {object} o
   * @param {Document} o.doc
   * @param {Window} o.win
   * @param {() => string} o.place   what the body names: "Slides · my-deck"
   * @param {() => void} [o.changed] re-render (the badge changed)
   */
  constructor({ doc, win, place, changed = () => {} }) {
    Object.assign(this, { doc, win, place, changed });
    this.waiting = 0;
    this.shown = [];
    this.audio = null;
    this.headless = isHeadlessClient(doc, win && win.location && win.location.search);
  }

  hidden() {
    return this.doc.visibilityState === 'hidden' || this.doc.hidden === true;
  }

  /** Every live socket message, after the store applied it. */
  receive(message) {
    const what = classify(message);
    if (!what || this.headless || !this.hidden()) return null;
    this.waiting += 1;
    this.changed();
    if (notificationsOn(this.win)) this.show(what);
    if (preference('notificationSound') === true) this.beep();
    return what.kind;
  }

  show(what) {
    const title = t(TITLES[what.kind], { tool: what.tool || '' });
    try {
      const shown = new this.win.Notification(title, {
        body: what.tool && what.kind === 'permission' ? `${what.tool} · ${this.place()}` : this.place(),
        tag: `pneuma-${what.kind}`,
        lang: this.doc.documentElement.lang || undefined,
      });
      shown.onclick = () => {
        try { this.win.focus(); } catch { /* the browser may refuse */ }
        shown.close();
      };
      this.shown.push(shown);
    } catch (error) {
      console.warn('pneuma: the notification could not be shown', error);
    }
  }

  /** The tab is seen again: the badge clears, the notifications go. */
  seen() {
    if (this.hidden()) return;
    for (const shown of this.shown.splice(0)) {
      try { shown.close(); } catch { /* already gone */ }
    }
    if (this.waiting) {
      this.waiting = 0;
      this.changed();
    }
  }

  /** "(2) " before the page's title while something waits. */
  titleBadge() {
    return this.waiting ? `(${this.waiting}) ` : '';
  }

  /** A user gesture: make the audio context (browsers start one only
   *  there) so that a later tone in a hidden tab can play. */
  primeSound() {
    const Context = this.win.AudioContext || this.win.webkitAudioContext;
    if (!Context || this.audio) return;
    try {
      this.audio = new Context();
    } catch {
      this.audio = null;
    }
  }

  /** A short two-note tone, quiet, a quarter second long. */
  beep() {
    this.primeSound();
    const audio = this.audio;
    if (!audio) return;
    try {
      if (audio.state === 'suspended' && audio.resume) audio.resume();
      const start = audio.currentTime;
      const gain = audio.createGain();
      gain.gain.setValueAtTime(0.06, start);
      gain.gain.exponentialRampToValueAtTime(0.0001, start + 0.26);
      gain.connect(audio.destination);
      [[880, 0], [1320, 0.09]].forEach(([frequency, at]) => {
        const tone = audio.createOscillator();
        tone.frequency.value = frequency;
        tone.connect(gain);
        tone.start(start + at);
        tone.stop(start + 0.26);
      });
    } catch (error) {
      console.warn('pneuma: the notification sound could not play', error);
    }
  }

  /** Ask the browser once, on a gesture of the person's (the first message
   *  sent): the answer becomes the person's choice. */
  async askOnce() {
    const api = this.win.Notification;
    if (this.headless || !api || preference('notifications') !== null || api.permission !== 'default') return;
    setPreference('notifications', false); // asked: never again, whatever the answer
    const answer = await this.request();
    setPreference('notifications', answer === 'granted');
    this.changed();
  }

  /** The switch: on asks the browser if it was never asked. Resolves to
   *  what is now in force (false when the browser blocks it). */
  async turnOn(on) {
    const api = this.win.Notification;
    if (!on || !api) {
      setPreference('notifications', false);
      this.changed();
      return false;
    }
    const answer = api.permission === 'default' ? await this.request() : api.permission;
    setPreference('notifications', answer === 'granted');
    this.changed();
    return answer === 'granted';
  }

  async request() {
    try {
      return await this.win.Notification.requestPermission();
    } catch {
      return 'denied';
    }
  }

  /** Listen to the page: visibility, and the first message the person sends. */
  attach() {
    this.doc.addEventListener('visibilitychange', () => this.seen());
    this.win.addEventListener('focus', () => this.seen());
    const onSend = (event) => {
      const target = event.target;
      const sending = event.type === 'keydown'
        ? event.key === 'Enter' && !event.shiftKey && target && target.closest && target.closest('.composer textarea')
        : target && target.closest && target.closest('.composer .send');
      if (!sending) return;
      if (preference('notificationSound') === true) this.primeSound();
      this.askOnce();
    };
    this.doc.addEventListener('keydown', onSend, true);
    this.doc.addEventListener('click', onSend, true);
    return this;
  }
}
