// The shell's CJK web font, as docs/viewer-contract.md ("Language") promises
// it to viewers: a frame of a viewer's own (srcdoc on this origin) links
// CJK_FONT_URL and names CJK_FONT_FAMILY in its font stack; Chinese then draws
// as glyphs on a machine without CJK fonts. pneuma.api names the same for
// exports (CJK_FONT_URL, CJK_FONT_FAMILY, cjk_font_dir).

export const CJK_FONT_FAMILY = "Pneuma Noto Sans SC";
export const CJK_FONT_URL = "/static/vendor/cjk-font/noto-sans-sc.css";

/**
 * Whether the page around the viewer has the shell's face (the shell does; a
 * shared file opened from disk has no server to fetch it from, and a viewer
 * should then link nothing).
 */
export function shellHasCjkFont(doc = globalThis.document) {
  if (!doc || !doc.fonts) return false;
  return [...doc.fonts].some((face) => face.family.replace(/["']/g, "") === CJK_FONT_FAMILY);
}
