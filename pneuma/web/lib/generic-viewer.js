// The viewer for a mode without viewer.module: the watched files in a list
// and the selected one as text (or an image). It follows the same contract
// as any mode's viewer (docs/viewer-contract.md) and answers the actions it
// cannot carry out with {success: false, message: "… not supported"}.

import { highlight, languageOf } from './markdown.js';
import { h } from './viewer-helpers.js';

const IMAGE = /\.(png|jpe?g|gif|webp|svg|avif|bmp|ico)$/i;

function attr(value) {
  return String(value).replaceAll('&', '&amp;').replaceAll('"', '&quot;').replaceAll('<', '&lt;');
}

let modeName = 'generic';

export const genericViewer = {
  mount(element, ctx) {
    modeName = (ctx.mode && ctx.mode.name) || modeName;
    // The shell's translator (viewer contract, "Language"): this viewer's
    // labels follow the page's language, and switch with it.
    const t = ctx.t;
    let current = null;
    const list = h('nav', { class: 'gv-list', 'aria-label': t('gv.files') });
    const title = h('div', { class: 'gv-title' });
    const body = h('div', { class: 'gv-body' });
    const root = h('div', { class: 'generic-viewer' }, list, h('section', { class: 'gv-main' }, title, body));
    element.append(root);

    function show(path) {
      current = path;
      ctx.setActiveFile(path);
      render();
    }

    function render() {
      const files = ctx.files;
      if (current && !files.some((f) => f.path === current)) current = null;
      if (!current && files.length) current = ctx.items()[0]?.path || files[0].path;
      list.replaceChildren(
        ...(files.length ? files.map((f) => h('button', {
          class: `gv-file${f.path === current ? ' active' : ''}`,
          title: f.path,
          onclick: () => show(f.path),
        }, h('span', { class: 'gv-dir' }, f.path.includes('/') ? `${f.path.slice(0, f.path.lastIndexOf('/') + 1)}` : ''),
        h('span', { class: 'gv-name' }, f.path.split('/').pop())))
          : [h('p', { class: 'gv-empty' }, t('gv.noFiles'))]),
      );
      const file = files.find((f) => f.path === current);
      title.replaceChildren(file ? h('span', {}, file.path) : '');
      if (!file) {
        body.replaceChildren(h('div', { class: 'gv-placeholder' }, files.length ? t('gv.pick') : t('gv.noWatched')));
        return;
      }
      if (IMAGE.test(file.path)) {
        body.replaceChildren(h('div', { class: 'gv-image' }, h('img', { src: ctx.contentUrl(file.path), alt: file.path })));
      } else if (file.binary || file.content == null) {
        body.replaceChildren(h('div', { class: 'gv-placeholder' }, t('gv.binary')));
      } else {
        const code = h('code', { class: 'hljs' });
        code.innerHTML = highlight(file.content, languageOf(file.path));
        body.replaceChildren(h('pre', { class: 'gv-text' }, code));
      }
    }

    function onMouseUp() {
      const selected = String(window.getSelection() || '').trim();
      if (selected && current) ctx.setSelection({ file: current, text: selected.slice(0, 2000) });
    }
    body.addEventListener('mouseup', onMouseUp);

    render();
    const stopListening = ctx.onLocaleChange(() => {
      list.setAttribute('aria-label', t('gv.files'));
      render();
    });

    return {
      update() {
        render();
      },
      async runAction(actionId, params) {
        if (actionId === 'navigate-to' && params && typeof params.file === 'string') {
          if (!ctx.files.some((f) => f.path === params.file)) {
            return { success: false, message: `no watched file ${params.file}` };
          }
          show(params.file);
          return { success: true, message: `showing ${params.file}` };
        }
        if (actionId === 'describe-view') {
          return {
            success: true,
            message: current ? `The file list and ${current} as text` : 'The file list (no file open)',
            data: { viewer: 'generic', file: current, files: ctx.files.map((f) => f.path) },
          };
        }
        return { success: false, message: `'${actionId}' is not supported by the generic file viewer (this mode has no viewer module)` };
      },
      destroy() {
        body.removeEventListener('mouseup', onMouseUp);
        stopListening();
        root.remove();
      },
    };
  },

  extractContext(selection) {
    if (!selection) return '';
    const text = String(selection.text || '').replace(/\s+/g, ' ').trim();
    const short = text.length > 400 ? `${text.slice(0, 400)}…` : text;
    return `<viewer-context mode="${attr(modeName)}" file="${attr(selection.file || '')}">selected text: "${short}"</viewer-context>`;
  },
};
