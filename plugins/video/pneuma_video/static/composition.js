// video.json as the player reads it (docs/video.md, "The file format"): the
// same rules as the Python reader (composition.py): frame n is at n / fps,
// a scene of d seconds has round(d × fps) frames and starts on a whole frame.
// A mistake is one English sentence naming the field (the agent reads it
// too) with a catalogue key beside it for the page.

export const COMPOSITION_FILE = "video.json";
const MAX_SCENE_S = 3600;
const DEFAULTS = { width: 1280, height: 720, fps: 30, background: "#000000" };
// "format": "1920x1080@30" stands for width, height and fps in one field (as
// in composition.py): how the init param seeds the size the person chose.
const FORMAT = /^\s*(\d+)\s*[x×]\s*(\d+)\s*@\s*(\d+(?:\.\d+)?)\s*$/;

function formatFields(data) {
  if (!("format" in data)) return {};
  const given = ["width", "height", "fps"].filter((key) => key in data);
  if (given.length) throw new CompositionError(`format and ${given.join(", ")} are both given: keep one way of saying the size`);
  const match = FORMAT.exec(String(data.format));
  if (!match) throw new CompositionError(`format must be WIDTHxHEIGHT@FPS such as "1920x1080@30", not ${JSON.stringify(data.format)}`);
  return { width: Number(match[1]), height: Number(match[2]), fps: Number(match[3]) };
}

export class CompositionError extends Error {}

/** Python's round(): halves to the even neighbour, so a scene of 2.5 frames
 * has 2 here as in composition.py (JavaScript's Math.round would say 3). */
export function roundHalfEven(x) {
  const r = Math.round(x);
  return Math.abs(x % 1) === 0.5 && r % 2 !== 0 ? r - 1 : r;
}

function positive(value, where) {
  if (typeof value !== "number" || !Number.isFinite(value) || value <= 0) {
    throw new CompositionError(`${where} must be a number > 0, not ${JSON.stringify(value)}`);
  }
  return value;
}

function whole(value, where) {
  if (!Number.isInteger(value)) throw new CompositionError(`${where} must be a whole number, not ${value}`);
  return value;
}

/** The composition from video.json's text; throws CompositionError. */
export function parseComposition(text) {
  let data;
  try {
    data = JSON.parse(text);
  } catch (error) {
    throw new CompositionError(`${COMPOSITION_FILE} is not valid JSON: ${error.message}`);
  }
  if (!data || typeof data !== "object" || Array.isArray(data)) {
    throw new CompositionError(`${COMPOSITION_FILE} must hold one JSON object`);
  }
  const values = { ...DEFAULTS, ...formatFields(data), ...data };
  const width = whole(positive(values.width, "width"), "width");
  const height = whole(positive(values.height, "height"), "height");
  const fps = positive(values.fps, "fps");
  if (!Array.isArray(values.scenes) || values.scenes.length === 0) {
    throw new CompositionError("scenes must be a list of at least one scene");
  }
  let start = 0;
  const scenes = values.scenes.map((entry, index) => {
    const where = `scenes[${index}]`;
    if (!entry || typeof entry !== "object") throw new CompositionError(`${where} must be an object with id, title, file and duration`);
    if (typeof entry.file !== "string" || !entry.file.trim()) {
      throw new CompositionError(`${where}.file must name the scene's HTML file (scenes/01-intro.html)`);
    }
    const duration = positive(entry.duration, `${where}.duration`);
    // at most an hour a scene, as composition.py says (MAX_SCENE_S)
    if (duration > MAX_SCENE_S) throw new CompositionError(`${where}.duration is ${duration}; at most ${MAX_SCENE_S}`);
    const frames = Math.max(1, roundHalfEven(duration * fps));
    const scene = {
      index, id: entry.id ? String(entry.id) : `scene-${index + 1}`, title: entry.title ? String(entry.title) : "",
      file: entry.file.trim().replace(/^\.\//, ""), duration, startFrame: start, frames,
    };
    start += frames;
    return scene;
  });
  return {
    title: typeof values.title === "string" ? values.title : "",
    width, height, fps, scenes, totalFrames: start,
    background: typeof values.background === "string" ? values.background : "#000000",
  };
}

/** The scene frame `frame` falls in and the time inside it (seconds). */
export function sceneAtFrame(composition, frame) {
  for (const scene of composition.scenes) {
    if (frame < scene.startFrame + scene.frames) {
      return { scene, sceneTime: (Math.max(frame, scene.startFrame) - scene.startFrame) / composition.fps };
    }
  }
  const last = composition.scenes[composition.scenes.length - 1];
  return { scene: last, sceneTime: (last.frames - 1) / composition.fps };
}

/** The frame showing at `seconds` (clamped to the composition). */
export function frameAt(composition, seconds) {
  const frame = roundHalfEven(Number(seconds) * composition.fps);
  return Math.min(Math.max(Number.isFinite(frame) ? frame : 0, 0), composition.totalFrames - 1);
}

/** A scene by id or file. */
export function findScene(composition, key) {
  const wanted = String(key || "").replace(/^\.\//, "");
  return composition.scenes.find((s) => s.id === wanted || s.file === wanted) || null;
}

/** "1.50 s" — the player's and the agent's way to write a time. */
export function seconds(value) {
  return `${value.toFixed(2)} s`;
}
