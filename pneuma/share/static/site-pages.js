// A page of a site-like mode (webcraft), in a shared file. In a session such
// a viewer loads its pages from the content site, a server of its own
// origin (pneuma/server/content_site.py), and a checkpoint's pages under
// /__pneuma__/snapshot/{ref}/{side}/ (pneuma/server/snapshot_site.py). A
// shared file has no server: the page is put together from the point's
// files instead (its stylesheets, scripts and images inlined) and shown as
// the frame's srcdoc, in a sandbox without allow-same-origin, so the
// workspace's scripts run with an opaque origin and, under the shared
// file's policy, can fetch nothing.

const SNAPSHOT = /\/__pneuma__\/snapshot\/([^/]+)\/(before|after)\/([^?#]*)/;
// Where the stand-in content site is said to be; nothing is ever asked of it.
export const SITE_ORIGIN = 'https://content-site.pneuma-share.invalid';

/** {ref, side, page} of a content site's snapshot URL, or null. */
export function snapshotPage(url) {
  const match = SNAPSHOT.exec(String(url));
  if (!match || !String(url).startsWith(SITE_ORIGIN)) return null;
  const page = match[3].split('/').map(decodeURIComponent).join('/') || 'index.html';
  return { ref: decodeURIComponent(match[1]), side: match[2], page };
}

/** `ref` resolved from the file `from` (both workspace paths), or null outside. */
export function resolvePath(from, ref) {
  if (!ref || /^([a-z][a-z0-9+.-]*:|\/\/|#)/i.test(ref)) return null;
  const clean = ref.split(/[?#]/)[0];
  const parts = clean.startsWith('/') ? [] : from.split('/').slice(0, -1);
  for (const part of clean.split('/')) {
    if (part === '' || part === '.') continue;
    if (part === '..') {
      if (!parts.length) return null;
      parts.pop();
    } else {
      parts.push(part);
    }
  }
  try {
    return parts.map(decodeURIComponent).join('/');
  } catch {
    return parts.join('/');
  }
}

function dataUrl(bytes, type) {
  let binary = '';
  for (let i = 0; i < bytes.length; i += 0x8000) binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return `data:${type};base64,${btoa(binary)}`;
}

/**
 * The HTML of `page` with what it links from the point inlined. `files` is
 * {path -> {bytes, text}} (text null for a binary file), `typeOf(path)` a
 * file's media type.
 */
export function inlinePage(page, files, typeOf, nonce = '') {
  const entry = files.get(page);
  if (!entry || entry.text == null) return null;
  const asData = (from, ref) => {
    const path = resolvePath(from, ref);
    const file = path && files.get(path);
    return file ? dataUrl(file.bytes, typeOf(path)) : null;
  };
  const css = (from, text) => String(text).replace(/url\(\s*(['"]?)([^'")]+)\1\s*\)/g,
    (whole, quote, ref) => { const url = asData(from, ref); return url ? `url("${url}")` : whole; });
  const doc = new DOMParser().parseFromString(entry.text, 'text/html');
  for (const link of doc.querySelectorAll('link[rel~="stylesheet"][href]')) {
    const path = resolvePath(page, link.getAttribute('href'));
    const file = path && files.get(path);
    if (!file || file.text == null) continue;
    const style = doc.createElement('style');
    style.textContent = css(path, file.text);
    link.replaceWith(style);
  }
  for (const style of doc.querySelectorAll('style')) style.textContent = css(page, style.textContent);
  for (const script of doc.querySelectorAll('script[src]')) {
    const path = resolvePath(page, script.getAttribute('src'));
    const file = path && files.get(path);
    if (!file || file.text == null) continue;
    script.removeAttribute('src');
    script.textContent = file.text.replace(/<\/script/gi, '<\\/script');
  }
  // The frame's srcdoc is held to the file's policy: the page's scripts run
  // by its nonce (with an opaque origin); its inline handlers do not.
  for (const script of doc.querySelectorAll('script')) if (nonce) script.setAttribute('nonce', nonce);
  for (const el of doc.querySelectorAll('img[src], source[src], video[src], audio[src], video[poster], input[src]')) {
    for (const name of ['src', 'poster']) {
      const url = el.hasAttribute(name) && asData(page, el.getAttribute(name));
      if (url) el.setAttribute(name, url);
    }
    el.removeAttribute('srcset');
  }
  for (const el of doc.querySelectorAll('[style*="url("]')) el.setAttribute('style', css(page, el.getAttribute('style')));
  return `<!doctype html>\n${doc.documentElement.outerHTML}`;
}
