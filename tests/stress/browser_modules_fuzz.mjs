// Issue 24, item 5 under stress, run by test_browser_modules_stress.py:
// the shell's store with a backend's extension, the backend slot, and the
// one markdown-it, fed many generated inputs (seeded, so a failure repeats).
// Prints one JSON line: what was tried and every problem found.
import '../js/browser-globals.mjs';
import { createStore } from '../../pneuma/web/lib/store.js';
import { loadBackendUi } from '../../pneuma/web/lib/backend-ui.js';
import { renderMarkdown } from '../../pneuma/web/lib/markdown.js';
import { MarkdownIt } from '../../pneuma/web/lib/markdown-it.js';
import { applyBrowserMessage, initialBrowserState } from '../../pneuma/agents/native/static/browser-clients.js';

const [messages, texts, modules, seed] = process.argv.slice(2).map(Number);
let state = seed >>> 0;
const random = () => ((state = (state * 1664525 + 1013904223) >>> 0) / 2 ** 32);
const pick = (list) => list[Math.floor(random() * list.length)];
const problems = [];

// 1. Messages of every kind, the backend's among them, some malformed.
const SHELL = ['user_message', 'assistant', 'stream_event', 'result', 'status_change', 'session_update', 'error',
  'system_note', 'permission_request', 'permission_cancelled', 'confirmation_request', 'tool_result', 'message_history'];
const BACKEND = ['browser_selection', 'extension_update', 'twin_update', 'task_update'];
const OTHER = ['gadget', '', 'constructor', '__proto__', 'toString'];
const junk = () => pick([null, undefined, 7, 'x', [], {}, { status: 'waiting' }, { id: 'm' }, [{ type: 'text', text: 'hi' }]]);
const store = createStore();
const browser = initialBrowserState();
const taken = new Map();
store.extend((msg) => {
  const ours = applyBrowserMessage(browser, msg);
  if (ours) taken.set(msg.type, (taken.get(msg.type) || 0) + 1);
  return ours;
});
let seq = 0;
for (let i = 0; i < messages; i += 1) {
  const type = pick([...SHELL, ...BACKEND, ...OTHER]);
  const msg = { type, seq: random() < 0.1 ? seq : ++seq, status: pick(['waiting', 'selected', 'idle', junk()]),
    clientId: pick(['b1', 'b2', junk()]), clients: junk(), candidates: junk(), twin: junk(), task: junk(),
    message: junk(), event: junk(), messages: random() < 0.5 ? [] : [{ type: pick(BACKEND), status: 'waiting' }],
    content: junk(), updates: junk(), request: junk(), data: junk() };
  try {
    store.receive(msg);
  } catch (error) {
    // A malformed shell message may throw as before; a backend one must never reach the shell.
    if (BACKEND.includes(type)) problems.push(`store threw on ${type}: ${error.message}`);
  }
}
if ('browser' in store.state) problems.push('the shell store keeps a backend slice');
for (const type of taken.keys()) if (!BACKEND.includes(type)) problems.push(`the backend took ${type}`);

// 2. Hostile Markdown through the chat's renderer and a viewer's own instance.
const viewerMd = new MarkdownIt({ html: false, linkify: true });
const HOSTILE = ['<script>alert(1)</script>', '<img src=x onerror=alert(1)>', '[x](javascript:alert(1))',
  '[x](JAVASCRIPT:alert(1))', '![y](vbscript:msgbox)', '<iframe src=//evil>', '<a href="javascript:1">a</a>',
  '[z](data:text/html;base64,PHNjcmlwdD4=)', '`<b>`', '```html\n<script>x</script>\n```', '<svg onload=alert(1)>'];
const PLAIN = ['# title', '- item', '**bold**', '> quote', '1. one', 'text', '| a | b |\n|---|---|\n| 1 | 2 |', '\n\n'];
for (let i = 0; i < texts; i += 1) {
  const parts = [];
  for (let k = 0; k < 1 + Math.floor(random() * 5); k += 1) parts.push(pick(random() < 0.5 ? HOSTILE : PLAIN));
  const text = parts.join(pick(['\n', ' ', '\n\n']));
  for (const [name, html] of [['chat', renderMarkdown(text)], ['viewer', viewerMd.render(text)]]) {
    if (/<(script|img|iframe|svg)\b/i.test(html) || /href="\s*(javascript|vbscript|data:text\/html)/i.test(html)) {
      problems.push(`${name} let markup through for ${JSON.stringify(text)}`);
    }
  }
}

// 3. Backend modules that are broken in every way: the page keeps an empty slot.
const BROKEN = [
  async () => { throw new Error('404'); }, async () => ({}), async () => ({ install: 5 }),
  async () => ({ install() { throw new Error('boom'); } }), async () => ({ install: () => null }),
  async () => ({ install: () => ({ header: 'x', overlays: [1, null, 'y'] }) }),
];
const warn = console.warn;
console.warn = () => {};
for (let i = 0; i < modules; i += 1) {
  const ui = await loadBackendUi(`/backend/${i}.js`, { store }, pick(BROKEN));
  if (ui.header.length || ui.overlays.length) problems.push(`a broken module ${i} put parts on the page`);
}
console.warn = warn;
console.log(JSON.stringify({ messages, texts, modules, taken: Object.fromEntries(taken), problems: problems.slice(0, 20), count: problems.length }));
