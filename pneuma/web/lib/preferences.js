// The person's preferences: the language, the chat's width, whether the
// chat is hidden (per layout), this workspace's draft, and the page's
// switches (follow the agent, notifications, their sound: null until the
// person chose; docs/notifications.md).
//
// The browser keeps its storage per origin, and every workspace (and the
// launcher) is served on a port of its own, so a choice kept there was lost
// on the next port. The truth is one file for the person on the server side
// (pneuma/server/preferences.py), read here at boot from /api/preferences
// and written back on change (debounced, and at once when the page goes
// away). localStorage is only a fast cache for when that file cannot be
// reached; the draft is never cached there (it belongs to one workspace,
// and a port may serve another one later).

const CACHE_KEY = 'pneuma.preferences';
const LOAD_WAIT_MS = 2000; // a slow server must not hold the first paint back for long
const SAVE_DELAY_MS = 300; // a burst of keystrokes or a drag is one write
export const MAX_DRAFT_CHARS = 20_000; // the server's limit (MAX_DRAFT_CHARS there)

export const SWITCHES = ['followAgent', 'notifications', 'notificationSound'];
const values = { locale: null, chatWidth: null, chatHidden: {}, draft: '', followAgent: null, notifications: null, notificationSound: null };
let loading = null;
let unsent = {};
let timer = null;
let savesHeld = false;

function readCache() {
  try {
    const cached = JSON.parse(localStorage.getItem(CACHE_KEY) || '{}');
    return cached && typeof cached === 'object' ? cached : {};
  } catch {
    return {}; // storage blocked or a damaged cache: the defaults
  }
}

function writeCache() {
  try {
    const { locale, chatWidth, chatHidden } = values;
    localStorage.setItem(CACHE_KEY, JSON.stringify({ locale, chatWidth, chatHidden }));
  } catch {
    // not cached; the server still keeps it
  }
}

function take(source) {
  if (typeof source.locale === 'string' || source.locale === null) values.locale = source.locale;
  if (typeof source.chatWidth === 'number' || source.chatWidth === null) values.chatWidth = source.chatWidth;
  if (source.chatHidden && typeof source.chatHidden === 'object') values.chatHidden = { ...source.chatHidden };
  if (typeof source.draft === 'string') values.draft = source.draft;
  for (const name of SWITCHES) if (typeof source[name] === 'boolean') values[name] = source[name];
}

async function fetchPreferences() {
  const controller = typeof AbortController === 'function' ? new AbortController() : null;
  const timeout = setTimeout(() => controller && controller.abort(), LOAD_WAIT_MS);
  try {
    const response = await fetch('/api/preferences', { cache: 'no-store', signal: controller && controller.signal });
    if (!response.ok) throw new Error(`the preferences answered ${response.status}`);
    return await response.json();
  } finally {
    clearTimeout(timeout);
  }
}

/** Read the person's preferences once (later calls share the first read).
 *  Never rejects: without the server the cache, else the defaults. */
export function loadPreferences() {
  if (!loading) {
    take(readCache());
    loading = fetchPreferences()
      .then((served) => { take(served || {}); writeCache(); })
      .catch((error) => console.warn('pneuma: the preferences could not be read; using this browser\'s', error))
      .then(() => ({ ...values }));
  }
  return loading;
}

/** A preference as read (or as last set in this page). */
export function preference(name) {
  return values[name];
}

/** Change a preference: kept at once for this page, written soon for the person. */
export function setPreference(name, value) {
  if (name === 'chatHidden') {
    values.chatHidden = { ...values.chatHidden, ...value };
    unsent.chatHidden = { ...(unsent.chatHidden || {}), ...value };
  } else {
    const kept = name === 'draft' ? String(value || '').slice(0, MAX_DRAFT_CHARS) : value;
    values[name] = kept;
    unsent[name] = kept;
  }
  writeCache();
  clearTimeout(timer);
  timer = setTimeout(() => save(), SAVE_DELAY_MS);
}

/**
 * While `held` (this page's server was stopped, or is gone), changes are kept
 * here unsent instead of knocking on a port nobody serves; they go with the
 * next save once it answers again.
 */
export function holdSaves(held) {
  savesHeld = Boolean(held);
  if (!savesHeld && Object.keys(unsent).length) {
    clearTimeout(timer);
    timer = setTimeout(() => save(), SAVE_DELAY_MS);
  }
}

/** Send what changed now (`keepalive`: the request outlives a closing page). */
export function save({ keepalive = false } = {}) {
  clearTimeout(timer);
  timer = null;
  if (savesHeld) return Promise.resolve(false);
  const body = unsent;
  unsent = {};
  if (!Object.keys(body).length) return Promise.resolve(true);
  return fetch('/api/preferences', {
    method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body), keepalive,
  }).then((response) => {
    if (!response.ok) console.warn(`pneuma: the preferences were not saved (${response.status})`);
    return response.ok;
  }, (error) => {
    console.warn('pneuma: the preferences were not saved', error);
    return false;
  });
}

if (typeof window !== 'undefined' && typeof window.addEventListener === 'function') {
  window.addEventListener('pagehide', () => { if (timer) save({ keepalive: true }); });
}
