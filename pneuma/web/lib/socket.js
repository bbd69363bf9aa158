// The browser socket of docs/protocol.md: connects, subscribes from the last
// seen seq, reconnects by itself with backoff, and queues what the person
// sends while the connection is down. It ends for good when the server says
// the workspace was stopped (`workspace_stopped`: state "stopped"), and
// stops retrying by itself after GIVE_UP_AFTER failed attempts in a row
// (state "gone": the server is not coming back by itself; a click, the
// network coming back or the tab shown again tries once more).
//
// Frames may carry several "\n"-separated JSON messages. Deduplication by
// seq happens in the store (it owns last_seq); this class only moves bytes.

import { HEADLESS } from './headless-client.js';

const MAX_DELAY_MS = 10_000;
// 0.4 + 0.8 + … + 10 + 10 + 10 s: about 40 s of a server not answering.
const GIVE_UP_AFTER = 8;

export class SessionSocket {
  /**
   * @param {object} o
   * @param {string} o.sessionId
   * @param {() => number} o.lastSeq      the seq of the last broadcast applied
   * @param {() => (string|null)} [o.conversationId]  the conversation the page
   *   shows: with it, a page that holds it gets only what it missed after a
   *   server restart (`history_resume`), not the whole first page again
   * @param {(msg: object) => void} o.onMessage
   * @param {(state: object) => void} o.onState  {state, attempt, retryAt}
   */
  constructor({ sessionId, lastSeq, conversationId = () => null, onMessage, onState }) {
    this.sessionId = sessionId;
    this.lastSeq = lastSeq;
    this.conversationId = conversationId;
    this.onMessage = onMessage;
    this.onState = onState;
    this.ws = null;
    this.state = 'connecting';
    this.subscribed = false;
    this.attempt = 0;
    this.outbox = [];
    this.timer = null;
    this.stopped = false;
    this._onOnline = () => { if (this.state === 'reconnecting' || this.state === 'gone') this.reconnectNow(); };
    this._onShown = () => { if (!document.hidden && this.state === 'gone') this.reconnectNow(); };
    window.addEventListener('online', this._onOnline);
    document.addEventListener('visibilitychange', this._onShown);
  }

  url() {
    const proto = location.protocol === 'https:' ? 'wss:' : 'ws:';
    // The server's own headless page says so: it never counts as the person's tab.
    const client = HEADLESS ? '?client=headless' : '';
    return `${proto}//${location.host}/ws/browser/${encodeURIComponent(this.sessionId)}${client}`;
  }

  connect() {
    clearTimeout(this.timer);
    this.timer = null;
    this.subscribed = false;
    this._setState('connecting');
    let ws;
    try {
      ws = new WebSocket(this.url());
    } catch (error) {
      this._scheduleReconnect();
      return;
    }
    this.ws = ws;
    ws.onmessage = (event) => {
      if (ws !== this.ws) return;
      const lines = String(event.data).split('\n');
      for (const line of lines) {
        if (!line.trim()) continue;
        let message;
        try {
          message = JSON.parse(line);
        } catch (error) {
          console.warn('pneuma: a socket line that is not JSON', line.slice(0, 200));
          continue;
        }
        if (message.type === 'session_init') this._subscribe();
        if (message.type === 'workspace_stopped') {
          this._end('stopped', { reason: message.reason, launcher: message.launcher || null });
          return;
        }
        try {
          this.onMessage(message);
        } catch (error) {
          console.error('pneuma: handling', message.type, 'failed', error);
        }
      }
    };
    ws.onclose = (event) => {
      if (ws !== this.ws) return;
      this.ws = null;
      this.subscribed = false;
      if (this.stopped) return;
      this.lastClose = { code: event.code, reason: event.reason };
      this._scheduleReconnect();
    };
    ws.onerror = () => { /* onclose follows and schedules the retry */ };
  }

  _subscribe() {
    const subscribe = { type: 'session_subscribe', last_seq: this.lastSeq() };
    const conversation = this.conversationId();
    if (subscribe.last_seq > 0 && conversation) subscribe.conversation_id = conversation;
    this._rawSend(subscribe);
    this.subscribed = true;
    this.attempt = 0;
    this._setState('open');
    const queued = this.outbox.splice(0);
    for (const message of queued) this._rawSend(message);
  }

  _scheduleReconnect() {
    this.attempt += 1;
    if (this.attempt > GIVE_UP_AFTER) {
      this._setState('gone');
      return;
    }
    const base = Math.min(MAX_DELAY_MS, 400 * 2 ** (this.attempt - 1));
    const delay = Math.round(base * (0.8 + Math.random() * 0.4));
    this.timer = setTimeout(() => this.connect(), delay);
    this._setState('reconnecting', Date.now() + delay);
  }

  reconnectNow() {
    if (this.stopped || this.state === 'open' || this.state === 'connecting') return;
    clearTimeout(this.timer);
    this.connect();
  }

  _setState(state, retryAt = null, ended = null) {
    this.state = state;
    this.onState({ state, attempt: this.attempt, retryAt, ended });
  }

  /** The session is over for this page: no retry, nothing queued is sent. */
  _end(state, ended) {
    this._detach();
    this.outbox = [];
    const ws = this.ws;
    this.ws = null;
    this.subscribed = false;
    if (ws) ws.close();
    this._setState(state, null, ended);
  }

  _detach() {
    this.stopped = true;
    clearTimeout(this.timer);
    window.removeEventListener('online', this._onOnline);
    document.removeEventListener('visibilitychange', this._onShown);
  }

  _rawSend(message) {
    if (!this.ws || this.ws.readyState !== WebSocket.OPEN) return false;
    this.ws.send(JSON.stringify(message));
    return true;
  }

  /** Send now if subscribed; otherwise queue (queued=true) or drop. */
  send(message, { queue = false } = {}) {
    if (this.subscribed && this._rawSend(message)) return true;
    if (queue) this.outbox.push(message);
    return false;
  }

  /** Drop a queued message (the person removed it before it went out). */
  unqueue(predicate) {
    this.outbox = this.outbox.filter((m) => !predicate(m));
  }

  close() {
    this._detach();
    if (this.ws) this.ws.close();
  }
}
