// Starts the shell, or explains why it cannot start.
//
// Our own modules need no build step, but the third-party browser code
// (Preact + htm, markdown-it, highlight.js) is copied into /static/vendor/
// by scripts/build-web. Without it the page would fail with an obscure
// import error, so check first and say what to do.

import { explainProblem } from './lib/problem-box.js';

const root = document.getElementById('app');

// The page's texts come from /static/i18n/ (lib/i18n.js). When the server
// cannot be reached, or refuses this browser, those cannot load either:
// the few texts for that case have an English fallback here.
const FALLBACK = {
  'boot.unreachable.title': 'The Pneuma server is not reachable',
  'boot.unreachable.body': 'Is `pneuma run` still running? ({message})',
  'boot.token.title': 'This page needs the session link',
  'boot.token.body': 'Open the URL that `pneuma run` printed (it ends in ?session=…&token=…); '
    + 'the token in it lets this browser talk to the session.',
};
let i18n = null;

function t(key, params = {}) {
  if (i18n && i18n.ready()) return i18n.t(key, params);
  return (FALLBACK[key] || key).replace(/\{(\w+)\}/g, (whole, name) => (name in params ? String(params[name]) : whole));
}

async function loadTexts() {
  try {
    i18n = await import('./lib/i18n.js');
    await i18n.initI18n();
    const opening = root.querySelector('.boot p');
    if (opening && i18n.ready()) opening.textContent = t('boot.opening');
  } catch (error) {
    console.warn('pneuma: the interface texts did not load', error);
  }
}

function explain(title, body, command) {
  explainProblem(root, title, body, command);
}

async function start() {
  // The texts and the probe load side by side; the texts are there before
  // anything is explained (loadTexts never rejects).
  const texts = loadTexts();
  let probe;
  try {
    probe = await fetch('/static/vendor/VERSIONS.json', { cache: 'no-store' });
    await texts;
  } catch (error) {
    await texts;
    explain(t('boot.unreachable.title'), t('boot.unreachable.body', { message: error.message }));
    return;
  }
  if (probe.status === 401) {
    explain(t('boot.token.title'), t('boot.token.body'));
    return;
  }
  if (probe.status === 404) {
    explain(t('boot.vendor.title'), t('boot.vendor.body'), 'scripts/build-web');
    return;
  }
  try {
    const app = await import('./app.js');
    await app.start(root);
  } catch (error) {
    console.error(error);
    explain(t('boot.failed.title'), String(error && error.stack || error), t('boot.failed.hint'));
  }
}

start();
