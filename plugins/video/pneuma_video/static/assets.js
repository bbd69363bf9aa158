// A scene's pictures, fonts and styles from the workspace (assets/logo.png).
// The scene's frame is an opaque origin: its requests to this server carry no
// session cookie and are refused, so the player fetches each file the scene
// names (same origin, through ctx.contentUrl: the live file, a checkpoint's
// in Compare, the shared file's own copy) and writes it into the fragment as
// a data: URL. Paths are relative to the workspace root, as in the export.

import { normalizePath } from "/static/lib/viewer-helpers.js";
import { dataUrl } from "./data-url.js";

// src="…", href="…", poster="…" and CSS url(…).
const REFERENCE = /(\b(?:src|href|poster)\s*=\s*)(["'])([^"']*)\2|(url\(\s*)(["']?)([^"')]*)\5(\s*\))/gi;
const EXTERNAL = /^(?:[a-z][a-z0-9+.-]*:|\/\/|#|\/)/i;

/** The workspace paths `html` refers to that `exists(path)` says are files. */
export function assetPaths(html, exists) {
  const found = new Set();
  for (const match of String(html).matchAll(REFERENCE)) {
    const path = workspacePath(match[3] ?? match[6]);
    if (path && exists(path)) found.add(path);
  }
  return [...found].sort();
}

function workspacePath(reference) {
  const text = String(reference || "").trim();
  if (!text || EXTERNAL.test(text)) return null;
  return normalizePath(decodeURI(text.split(/[?#]/)[0]));
}

/** `html` with every reference to a workspace file as that file's data: URL
 * (`urlOf(path)` is its URL here, or null); a file that cannot be read stays
 * as written (the scene shows it missing). */
export async function inlineAssets(html, urlOf) {
  const urls = new Map();
  const text = String(html);
  for (const match of text.matchAll(REFERENCE)) {
    const path = workspacePath(match[3] ?? match[6]);
    const url = path ? urlOf(path) : null;
    if (url && !urls.has(path)) urls.set(path, dataUrl(url).catch(() => null));
  }
  if (!urls.size) return text;
  const data = new Map();
  for (const [path, pending] of urls) data.set(path, await pending);
  return text.replace(REFERENCE, (whole, attr, quote, value, open, cssQuote, cssValue, close) => {
    const path = workspacePath(value ?? cssValue);
    const inlined = path ? data.get(path) : null;
    if (!inlined) return whole;
    return attr !== undefined ? `${attr}${quote}${inlined}${quote}` : `${open}${cssQuote}${inlined}${cssQuote}${close}`;
  });
}
