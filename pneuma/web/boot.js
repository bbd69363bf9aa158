// Starts the shell, or explains why it cannot start.
//
// Our own modules need no build step, but the third-party browser code
// (Preact + htm, markdown-it, highlight.js) is copied into /static/vendor/
// by scripts/build-web. Without it the page would fail with an obscure
// import error, so check first and say what to do.

const root = document.getElementById('app');

function explain(title, body, command) {
  root.replaceChildren();
  const box = document.createElement('div');
  box.className = 'boot boot-problem';
  const h = document.createElement('h1');
  h.textContent = title;
  const p = document.createElement('p');
  p.textContent = body;
  box.append(h, p);
  if (command) {
    const pre = document.createElement('pre');
    pre.textContent = command;
    box.append(pre);
  }
  root.append(box);
  document.title = `Pneuma · ${title}`;
}

async function start() {
  let probe;
  try {
    probe = await fetch('/static/vendor/VERSIONS.json', { cache: 'no-store' });
  } catch (error) {
    explain('The Pneuma server is not reachable',
      `Is \`pneuma run\` still running? (${error.message})`);
    return;
  }
  if (probe.status === 401) {
    explain('This page needs the session link',
      'Open the URL that `pneuma run` printed (it ends in ?session=…&token=…); ' +
      'the token in it lets this browser talk to the session.');
    return;
  }
  if (probe.status === 404) {
    explain('The browser code is not installed',
      'Pneuma\'s page uses a few third-party browser libraries that are fetched ' +
      'from npm at setup and are missing here. Run this in the Pneuma checkout, ' +
      'then reload the page:',
      'scripts/build-web');
    return;
  }
  try {
    const app = await import('./app.js');
    await app.start(root);
  } catch (error) {
    console.error(error);
    explain('The page failed to start', String(error && error.stack || error),
      'If you updated Pneuma recently, run scripts/build-web and reload.');
  }
}

start();
