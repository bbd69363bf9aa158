// Why a page cannot start, in place of the page: the shell's boot.js and
// the launcher both say it this way (a title, what happened, and a command
// to run when there is one). Plain DOM: it must work when nothing else
// loaded, the third-party browser code included.

/** Replace everything in `root` with the problem; the tab's title says it too. */
export function explainProblem(root, title, body, command) {
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
