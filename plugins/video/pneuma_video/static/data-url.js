// A file of this server as a data: URL, fetched once per URL: a scene's frame
// is an opaque origin that cannot load from here, so what it needs (its
// assets, the CJK font's slices) is handed to it inline. Used by the player
// and by the export's page (frames.py), which serves this module too.

const cache = new Map(); // URL (with its version) → Promise of a data: URL

export function dataUrl(url) {
  if (!cache.has(url)) {
    cache.set(url, fetch(url, { credentials: "same-origin" })
      .then((response) => (response.ok ? response.blob() : Promise.reject(new Error(String(response.status)))))
      .then((blob) => new Promise((resolve, reject) => {
        const reader = new FileReader();
        reader.onload = () => resolve(String(reader.result));
        reader.onerror = () => reject(reader.error);
        reader.readAsDataURL(blob);
      })));
  }
  return cache.get(url);
}
