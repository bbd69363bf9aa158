// The video player's reading of video.json (plugins/video/.../static/composition.js):
// the same frame arithmetic as the Python reader (composition.py), so the
// player's frame n is the export's frame n.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  CompositionError, findScene, frameAt, parseComposition, sceneAtFrame,
} from '../../plugins/video/pneuma_video/static/composition.js';

const text = (data) => JSON.stringify({ width: 320, height: 180, fps: 24, ...data });
const scenes = [
  { id: 'a', title: 'A', file: './scenes/a.html', duration: 1.01 },
  { id: 'b', file: 'scenes/b.html', duration: 0.5 },
];

test('every scene starts on a whole frame: round(duration × fps) frames each', () => {
  const c = parseComposition(text({ scenes }));
  assert.deepEqual(c.scenes.map((s) => [s.id, s.file, s.startFrame, s.frames]),
    [['a', 'scenes/a.html', 0, 24], ['b', 'scenes/b.html', 24, 12]]);
  assert.equal(c.totalFrames, 36);
  assert.equal(c.background, '#000000');
  assert.deepEqual(sceneAtFrame(c, 24), { scene: c.scenes[1], sceneTime: 0 });
  assert.deepEqual(sceneAtFrame(c, 30), { scene: c.scenes[1], sceneTime: 0.25 });
  assert.equal(sceneAtFrame(c, 99).sceneTime, 11 / 24); // past the end: the last frame
  assert.equal(frameAt(c, 1.25), 30);
  assert.equal(frameAt(c, 60), 35);
  assert.equal(frameAt(c, -1), 0);
  assert.equal(findScene(c, 'scenes/b.html'), c.scenes[1]);
  assert.equal(findScene(c, 'nope'), null);
});

test('half frames round to even, as Python rounds them', () => {
  const c = parseComposition(JSON.stringify({ fps: 10, scenes: [
    { id: 'a', file: 'a.html', duration: 0.25 }, { id: 'b', file: 'b.html', duration: 0.35 }] }));
  assert.deepEqual(c.scenes.map((s) => s.frames), [2, 4]);
  assert.equal(frameAt(c, 0.25), 2);
  assert.equal(frameAt(c, 0.15), 2);
});

test('a mistake names its field, as the Python reader words it', () => {
  const wrong = [
    ['{', /^video\.json is not valid JSON: /],
    [text({ scenes: [] }), /^scenes must be a list of at least one scene$/],
    [text({ fps: 0, scenes }), /^fps must be a number > 0, not 0$/],
    [text({ width: 320.5, scenes }), /^width must be a whole number, not 320.5$/],
    [text({ scenes: [{ id: 'a', file: 'a.html', duration: '2' }] }), /^scenes\[0\]\.duration must be a number > 0, not "2"$/],
    [text({ scenes: [{ id: 'a', duration: 2 }] }), /^scenes\[0\]\.file must name the scene's HTML file/],
  ];
  for (const [source, message] of wrong) {
    assert.throws(() => parseComposition(source), (error) => error instanceof CompositionError && message.test(error.message));
  }
});

test('"format" is width, height and fps in one field, as the seed writes the init choice', () => {
  const c = parseComposition(JSON.stringify({ format: '1080x1920@25', scenes }));
  assert.deepEqual([c.width, c.height, c.fps], [1080, 1920, 25]);
  assert.throws(() => parseComposition(JSON.stringify({ format: 'big', scenes })), /format must be WIDTHxHEIGHT@FPS/);
  assert.throws(() => parseComposition(text({ format: '1080x1920@25', scenes })), /format and width, height, fps are both given/);
});

test('a scene longer than an hour is refused, as composition.py refuses it', () => {
  assert.throws(() => parseComposition(text({ scenes: [{ id: 'a', file: 'a.html', duration: 1e308 }] })),
    /scenes\[0\]\.duration is 1e\+308; at most 3600/);
});
