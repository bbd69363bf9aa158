// Small helpers a mode's viewer may import from the shell instead of writing
// its own: `import { h, sharedStylesheet, fetchJson, translator, normalizePath } from "/static/lib/viewer-helpers.js"`.
// They are part of the viewer contract (docs/viewer-contract.md, "Shared
// helpers") and keep pneuma.api's compatibility promise: add names or
// optional arguments; never change or remove one outside a major version.
// The shell uses them too.

/**
 * A DOM element: `h("button", {class: "x", onclick, hidden: true}, child, …)`.
 * `class` sets className, `text` the text content, `on<event>` adds a
 * listener; `true` becomes an empty attribute, `null`/`undefined`/`false`
 * leave the attribute out. Children may be nodes, strings, nested arrays or
 * `null` (skipped).
 */
export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (value == null || value === false) continue;
    if (key === 'class') el.className = value;
    else if (key === 'text') el.textContent = value;
    else if (key.startsWith('on')) el.addEventListener(key.slice(2), value);
    else el.setAttribute(key, value === true ? '' : value);
  }
  for (const child of children.flat()) if (child != null) el.append(child);
  return el;
}

/** How long acquire() waits for a stylesheet that neither loads nor fails. */
const STYLESHEET_WAIT_MS = 3000;

/**
 * A stylesheet in the page's <head> for as long as some viewer instance uses
 * it (a mode switch or a second mount must not leave it behind or add it
 * twice). `acquire()` adds it on first use and resolves once it has loaded
 * (or failed, or after 3 s), so the viewer can measure laid-out content;
 * `release()` removes it when the last user lets go. `attributes` go on the
 * <link> (e.g. `{"data-pneuma-doc": ""}` to find it in tests).
 */
export function sharedStylesheet(href, attributes = {}) {
  let users = 0;
  let link = null;
  return {
    acquire() {
      users += 1;
      if (!link) {
        link = h('link', { rel: 'stylesheet', href, ...attributes });
        document.head.append(link);
      }
      const current = link;
      if (current.sheet) return Promise.resolve();
      return new Promise((resolve) => {
        const done = () => resolve();
        current.addEventListener('load', done, { once: true });
        current.addEventListener('error', done, { once: true });
        setTimeout(done, STYLESHEET_WAIT_MS);
      });
    },
    release() {
      users = Math.max(0, users - 1);
      if (users === 0 && link) {
        link.remove();
        link = null;
      }
    },
  };
}

/**
 * `fetch` for Pneuma's JSON routes (same-origin, with the session cookie):
 * resolves to the parsed body (`null` when there is none). `options` are
 * fetch's, plus `json`: a value to send as the JSON request body. A status
 * that is not 2xx rejects with an Error carrying the server's one error
 * shape (docs/errors.md): `message`, `status`, `code` ("E_…"), `details`,
 * `hint`, `recoverable` and the raw `body`.
 */
export async function fetchJson(url, options = {}) {
  const { json, ...init } = options;
  if (json !== undefined) {
    init.headers = { ...init.headers, 'Content-Type': 'application/json' };
    init.body = JSON.stringify(json);
  }
  const response = await fetch(url, { credentials: 'same-origin', ...init });
  let body = null;
  try {
    body = await response.json();
  } catch {
    body = null;
  }
  if (!response.ok) {
    const error = (body && body.error) || {};
    const message = error.message || (body && body.message) || `${response.status} ${response.statusText}`;
    const failure = new Error(message);
    failure.status = response.status;
    failure.code = error.code;
    failure.details = error.details || {};
    failure.hint = error.hint || null;
    failure.recoverable = error.recoverable !== false;
    failure.body = body;
    throw failure;
  }
  return body;
}

/**
 * A viewer's own translator over its label table `messages`
 * (`{"en": {key: text}, "zh-CN": {…}}`, docs/viewer-contract.md,
 * "Language"): `t(key, params, fallback)` looks the key up in the locale
 * `getLocale()` names now, then in English, then answers `fallback` (the
 * key itself unless given); `{name}` placeholders are filled from `params`
 * and a placeholder without a value is left as it is.
 */
export function translator(messages, getLocale) {
  const english = messages.en || {};
  return (key, params = {}, fallback = key) => {
    const table = messages[getLocale()] || english;
    const text = table[key] ?? english[key] ?? fallback;
    return String(text).replace(/\{(\w+)\}/g, (whole, name) => (name in params ? String(params[name]) : whole));
  };
}

/**
 * A workspace-relative path in one spelling: backslashes as slashes, no
 * empty or `.` segments, `..` applied; `null` when it climbs out of the
 * workspace ("../x"). Links in a page and paths the agent names are
 * compared with the workspace's file list this way.
 */
export function normalizePath(path) {
  const out = [];
  for (const part of String(path).replace(/\\/g, "/").split("/")) {
    if (part === "" || part === ".") continue;
    if (part === "..") {
      if (!out.length) return null;
      out.pop();
    } else out.push(part);
  }
  return out.join("/");
}
