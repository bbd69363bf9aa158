// The message a review sends (docs/viewer-contract.md, "Annotate"): the
// <viewer-review> of the pins, each pin's comment as an attribute the agent
// reads back exactly and its viewer's <viewer-context>, within the bounds of
// one user_message. Pure functions, no DOM (tests/js/review-message.test.mjs).

// The message's bounds (pneuma/core/messages.py, UserMessage): at most 20
// images, a viewer_context of at most 200,000 characters; a review stays
// under both with room, and what does not fit waits for the next review.
export const MAX_IMAGES = 20;
export const MAX_PINS_PER_REVIEW = 100;
export const MAX_REVIEW_CHARS = 180_000;
export const MAX_PIN_CONTEXT_CHARS = 4_000;
export const MAX_COMMENT_CHARS = 2_000;
// What the agent reads stays English (the default text of a review).
export const DEFAULT_REVIEW_TEXT = 'Please address these review comments.';

/** An attribute value the agent reads back exactly: no quote or markup ends it early. */
export function attr(value) {
  return String(value).replaceAll('&', '&amp;').replaceAll('"', '&quot;')
    .replaceAll('<', '&lt;').replaceAll('>', '&gt;');
}

function cut(text, limit) {
  return text.length > limit ? `${text.slice(0, limit - 1)}…` : text;
}

/** A short fingerprint of a text (FNV-1a, 32 bits), for a pin's fallback place. */
export function fingerprint(text) {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i += 1) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return `${text.length}:${hash.toString(16)}`;
}

/**
 * A pin's <viewer-context>, bounded and whole. `source` is what the viewer
 * gives: {extract(selection) → text or null, modeName, label(selection)}.
 */
export function pinContext(pin, source) {
  let text = null;
  try {
    text = source.extract ? source.extract(pin.selection) : null;
  } catch (error) {
    console.error('pneuma: extractContext failed', error);
  }
  if (!text) {
    const label = source.label ? source.label(pin.selection) : '';
    text = `<viewer-context mode="${attr(source.modeName || '')}">${attr(label)}</viewer-context>`;
  }
  // The viewer's text may quote the page: a quoted tag of the review's own
  // must not read as one (the agent would see a pin end, or a new one start).
  text = String(text).replace(/<(\/?)(pin|viewer-review)\b/gi, '&lt;$1$2');
  if (text.length <= MAX_PIN_CONTEXT_CHARS) return text;
  // Cut inside the element and close it, so the review stays well formed.
  const closing = text.trimEnd().endsWith('</viewer-context>') ? '</viewer-context>' : '';
  return `${text.slice(0, MAX_PIN_CONTEXT_CHARS - closing.length - 1)}…${closing}`;
}

/**
 * The <viewer-review> of `list` and the pins it holds: as many as fit the
 * message's bounds, in their order, each named by the number the person sees.
 */
export function reviewContext(list, source) {
  const parts = [];
  const included = [];
  let size = 64;
  for (const pin of list) {
    if (included.length >= MAX_PINS_PER_REVIEW) break;
    const comment = cut(String(pin.comment || '').trim(), MAX_COMMENT_CHARS);
    const part = `<pin n="${Number(pin.number) || 0}" comment="${attr(comment)}">\n${pinContext(pin, source)}\n</pin>`;
    if (size + part.length + 1 > MAX_REVIEW_CHARS) break;
    size += part.length + 1;
    parts.push(part);
    included.push(pin);
  }
  const text = `<viewer-review pins="${included.length}">\n${parts.join('\n')}\n</viewer-review>`;
  return { text, included };
}
