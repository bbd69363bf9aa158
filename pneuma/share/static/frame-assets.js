// The workspace's images inside a viewer's frames, in a shared file. A
// viewer draws a slide in a frame whose <base> is the checkpoint's content
// URL (ctx.baseUrl); on file:// nothing answers there, so each image,
// poster or CSS url() of such a frame that names a file of the point is
// pointed at that file's blob: URL instead. Only frames the page may read
// (a slide's: allow-same-origin without scripts) are reached; a frame that
// runs the workspace's scripts is never same-origin with the page.

const ATTRIBUTES = [['img', 'src'], ['source', 'src'], ['video', 'src'], ['video', 'poster'],
  ['audio', 'src'], ['image', 'href'], ['input', 'src']];
const CSS_URL = /url\(\s*(['"]?)([^'")]+)\1\s*\)/g;

/** The file of the point that `absolute` (resolved under `base`) names, or null. */
export function pathUnder(absolute, base) {
  const text = String(absolute || '');
  if (!base || !text.startsWith(base)) return null;
  const rest = text.slice(base.length).split(/[?#]/)[0];
  try {
    return rest.split('/').map(decodeURIComponent).join('/');
  } catch {
    return null;
  }
}

/** `css` with every url() naming a file of the point replaced by its blob. */
export function mapCss(css, resolve, urls, base) {
  return String(css).replace(CSS_URL, (whole, quote, ref) => {
    const path = pathUnder(resolve(ref), base);
    const url = path && urls.get(path);
    return url ? `url("${url}")` : whole;
  });
}

function mapDocument(doc, urls, base) {
  const resolve = (ref) => {
    try {
      return new URL(ref, doc.baseURI).href;
    } catch {
      return null;
    }
  };
  for (const [tag, name] of ATTRIBUTES) {
    for (const el of doc.querySelectorAll(`${tag}[${name}]`)) {
      const value = el.getAttribute(name);
      if (/^(blob|data):/i.test(value)) continue;
      const path = pathUnder(resolve(value), base);
      if (path && urls.has(path)) el.setAttribute(name, urls.get(path));
    }
  }
  for (const el of doc.querySelectorAll('style')) {
    if (el.textContent.includes('url(')) {
      const mapped = mapCss(el.textContent, resolve, urls, base);
      if (mapped !== el.textContent) el.textContent = mapped;
    }
  }
  for (const el of doc.querySelectorAll('[style*="url("]')) {
    const mapped = mapCss(el.getAttribute('style'), resolve, urls, base);
    if (mapped !== el.getAttribute('style')) el.setAttribute('style', mapped);
  }
}

/**
 * Keep the frames under `element` showing the point's files: `urls` is
 * {path -> blob: URL}, `base` the absolute URL the frames' <base> names.
 * Returns a function that stops watching.
 */
export function mapFrameAssets(element, urls, base) {
  const watched = new WeakSet(); // documents, and frames with a load listener
  const observers = [];
  const watch = (frame) => {
    if (watched.has(frame)) return;
    watched.add(frame);
    const apply = () => {
      let doc = null;
      try {
        doc = frame.contentDocument;
      } catch {
        return;
      }
      if (!doc || !doc.documentElement || watched.has(doc)) return;
      watched.add(doc);
      mapDocument(doc, urls, base);
      const inside = new MutationObserver(() => mapDocument(doc, urls, base));
      inside.observe(doc.documentElement, { subtree: true, childList: true, characterData: true,
        attributes: true, attributeFilter: ['src', 'href', 'poster', 'style'] });
      observers.push(inside);
    };
    frame.addEventListener('load', apply);
    apply();
  };
  const frames = () => element.querySelectorAll('iframe').forEach(watch);
  const outside = new MutationObserver(frames);
  outside.observe(element, { subtree: true, childList: true });
  observers.push(outside);
  frames();
  return () => observers.forEach((observer) => observer.disconnect());
}
