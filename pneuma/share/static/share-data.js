// The shared file's data as the player reads it (pneuma/share/model.py is
// its one definition): which files a point of the timeline holds, which
// turn a message belongs to, how a change is labelled. Pure functions, so
// tests/js/share-data.test.mjs runs them under node.

/** The points of the timeline: each turn, or the start alone when there is none. */
export function timelinePoints(data) {
  const turns = Array.isArray(data.turns) ? data.turns : [];
  if (turns.length) return turns.map((turn, index) => ({ index, ref: String(turn.ref), turn }));
  return [{ index: 0, ref: 'start', turn: { ref: 'start', tree: data.start || {}, changes: [], message: '' } }];
}

/** The files (path -> content hash) of `side` ("after" or "before") of the point named `ref`. */
export function treeOf(data, ref, side = 'after') {
  const points = timelinePoints(data);
  const at = points.findIndex((point) => point.ref === String(ref));
  if (at < 0) return null;
  if (side === 'after') return points[at].turn.tree || {};
  return at === 0 ? data.start || {} : points[at - 1].turn.tree || {};
}

function plain(text) {
  return String(text || '').replace(/…$/, '').replace(/\s+/g, ' ').trim();
}

/** Whether a turn's message (the checkpoint's, perhaps shortened with "…") is the person's `text`. */
function sameMessage(turnMessage, text) {
  const short = plain(turnMessage);
  return short !== '' && plain(text).startsWith(short);
}

/**
 * The timeline point each message belongs to. A message of the person
 * starts the next turn whose message is that message (a checkpoint keeps
 * the text it was recorded with); one no turn names falls back to its time
 * (the first turn that ended at or after it). Every other message belongs
 * to the turn of the person's message before it.
 */
export function messageTurns(conversation, points) {
  const ends = points.map((point) => Number(point.turn.at) || 0);
  const byTime = (message) => {
    const at = Number(message.at);
    if (!Number.isFinite(at) || !message.at) return -1;
    return ends.findIndex((end) => end >= at);
  };
  let current = 0;
  let next = 0; // the first turn no message of the person has claimed yet
  return (conversation || []).map((message) => {
    if (message.role === 'user') {
      const named = points.findIndex((point, index) => index >= next && sameMessage(point.turn.message, message.text));
      const found = named >= 0 ? named : byTime(message);
      if (found >= 0) {
        current = found;
        next = found + 1;
      }
    }
    return Math.min(current, points.length - 1);
  });
}

/** A label as the data gives it ("x" or {en, zh-CN}) in `locale`. */
export function labelIn(label, locale) {
  if (label == null) return '';
  if (typeof label !== 'object') return String(label);
  return label[locale] || label[String(locale).split('-')[0]] || label.en || Object.values(label)[0] || '';
}

/** The file a change names first (to show it), or null. */
export function changeFile(change) {
  const locate = (change && change.locate) || {};
  if (typeof locate.file === 'string' && locate.file) return locate.file;
  if (typeof locate.path === 'string' && locate.path) return locate.path;
  const files = (change && change.files) || [];
  return typeof files[0] === 'string' ? files[0] : null;
}

/** The route of the session's server a viewer asks for one side of a
 *  checkpoint (pneuma/server/routes_snapshot.py), parsed; null otherwise. */
export function parseStateRoute(path) {
  const match = /^\/api\/checkpoints\/([^/]+)\/state\/(before|after)\/(files|content\/(.+))$/.exec(String(path).split('?')[0]);
  if (!match) return null;
  const file = match[4] ? match[4].split('/').map(decodeURIComponent).join('/') : null;
  return { ref: decodeURIComponent(match[1]), side: match[2], file };
}

const TYPES = {
  svg: 'image/svg+xml', png: 'image/png', jpg: 'image/jpeg', jpeg: 'image/jpeg', gif: 'image/gif',
  webp: 'image/webp', avif: 'image/avif', ico: 'image/x-icon', css: 'text/css', html: 'text/html',
  htm: 'text/html', js: 'text/javascript', mjs: 'text/javascript', json: 'application/json',
  pdf: 'application/pdf', mp3: 'audio/mpeg', ogg: 'audio/ogg', wav: 'audio/wav', mp4: 'video/mp4',
  webm: 'video/webm', woff: 'font/woff', woff2: 'font/woff2', ttf: 'font/ttf', otf: 'font/otf',
  txt: 'text/plain', md: 'text/markdown',
};

/** The media type a file's blob is given (an <img> of an SVG needs it). */
export function typeOf(path) {
  const ext = String(path).split('/').pop().split('.').pop().toLowerCase();
  return TYPES[ext] || 'application/octet-stream';
}

/** Whether `bytes` are UTF-8 text (else the viewer is told the file is binary). */
export function decodeText(bytes) {
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    return null;
  }
}
