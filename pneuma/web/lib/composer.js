// The composer: the draft, pasted and dropped images, the viewer's
// selection as context, send and stop.

import { html, useState, useEffect, useLayoutEffect, useRef } from '../vendor/preact-htm.js';
import { localized, selectionLabel } from './viewer-host.js';
import { t } from './i18n.js';
import { preference, setPreference } from './preferences.js';
import { Icon, hasAgent, isRunning, shell, store, ui } from './shell-state.js';
import { sendingEnded } from './stopped.js';

const ACCEPTED_IMAGES = ['image/png', 'image/jpeg', 'image/gif', 'image/webp'];
const MAX_IMAGE_BYTES = 3.7 * 1024 * 1024; // the API's 5 MB base64 limit, with room

function readImage(file) {
  return new Promise((resolve, reject) => {
    const reader = new FileReader();
    reader.onerror = () => reject(reader.error);
    reader.onload = () => resolve(String(reader.result));
    reader.readAsDataURL(file);
  });
}

async function shrink(dataUrl) {
  const img = new Image();
  img.src = dataUrl;
  await img.decode();
  const scale = Math.min(1, 2048 / Math.max(img.naturalWidth, img.naturalHeight));
  const canvas = document.createElement('canvas');
  canvas.width = Math.round(img.naturalWidth * scale);
  canvas.height = Math.round(img.naturalHeight * scale);
  canvas.getContext('2d').drawImage(img, 0, 0, canvas.width, canvas.height);
  return canvas.toDataURL('image/jpeg', 0.86);
}

async function toAttachment(file) {
  if (!ACCEPTED_IMAGES.includes(file.type)) throw new Error(t('composer.badImage', { name: file.name || t('composer.thisFile') }));
  let url = await readImage(file);
  if (file.size > MAX_IMAGE_BYTES && file.type !== 'image/gif') url = await shrink(url);
  const [head, data] = url.split(',', 2);
  const media_type = head.slice(5).split(';')[0];
  return { media_type, data, url, name: file.name || t('composer.pastedImage') };
}

export function Composer() {
  const state = store.state;
  const [draft, setDraft] = useState(() => preference('draft') || ''); // this workspace's, kept for the person (lib/preferences.js)
  const [images, setImages] = useState([]);
  const [problem, setProblem] = useState(null);
  const [dragOver, setDragOver] = useState(false);
  const textarea = useRef(null);
  const fileInput = useRef(null);
  const ended = sendingEnded(); // the workspace was stopped, or its server is gone (lib/stopped.js)
  const running = isRunning() && !ended;
  const agent = hasAgent() && !ended;
  const commands = (ui.config.mode.viewerApi && ui.config.mode.viewerApi.commands) || [];

  useEffect(() => { if (draft !== preference('draft')) setPreference('draft', draft); }, [draft]);
  useLayoutEffect(() => {
    const el = textarea.current;
    if (!el) return;
    el.style.height = 'auto';
    el.style.height = `${Math.min(el.scrollHeight, 240)}px`;
  }, [draft]);

  const addFiles = async (files) => {
    setProblem(null);
    for (const file of files) {
      try {
        const attachment = await toAttachment(file);
        setImages((list) => [...list, attachment].slice(0, 20));
      } catch (error) {
        setProblem(error.message);
      }
    }
  };

  const submit = () => {
    if (!agent) return;
    if (shell.send(draft, images)) {
      setDraft('');
      setImages([]);
      setProblem(null);
    }
  };

  const onKeyDown = (e) => {
    if (e.key === 'Enter' && !e.shiftKey && !e.isComposing) {
      e.preventDefault();
      submit();
    }
  };

  const onPaste = (e) => {
    const files = [...(e.clipboardData ? e.clipboardData.files : [])].filter((f) => f.type.startsWith('image/'));
    if (files.length) {
      e.preventDefault();
      addFiles(files);
    }
  };

  const onDrop = (e) => {
    e.preventDefault();
    setDragOver(false);
    const files = [...(e.dataTransfer ? e.dataTransfer.files : [])];
    if (files.length) addFiles(files);
  };

  const selection = ui.selection;
  return html`<div class=${`composer-wrap${dragOver ? ' drag' : ''}`}
      onDragOver=${(e) => { if (e.dataTransfer && [...e.dataTransfer.types].includes('Files')) { e.preventDefault(); setDragOver(true); } }}
      onDragLeave=${() => setDragOver(false)} onDrop=${onDrop}>
    ${commands.length > 0 && html`<div class="commands">
      ${commands.map((c) => html`<button key=${c.id} class="command" data-command=${c.id} disabled=${!agent}
        title=${localized(c.description) || c.prompt} onClick=${() => shell.send(c.prompt)}><${Icon} name="bolt" size=${12} />${localized(c.label)}</button>`)}
    </div>`}
    ${selection != null && html`<div class="ctx-row">
      <span class="ctx-chip" title=${t('composer.selectionTitle')}>
        <${Icon} name="target" size=${12} /><span class="ctx-text">${selectionLabel(selection)}</span>
        <button class="chip-x" aria-label=${t('composer.removeSelection')} onClick=${() => shell.clearSelection()}><${Icon} name="x" size=${12} /></button>
      </span>
    </div>`}
    ${images.length > 0 && html`<div class="attachments">
      ${images.map((img, i) => html`<span class="thumb" key=${i} title=${img.name}><img src=${img.url} alt=${img.name} />
        <button class="chip-x" aria-label=${t('composer.removeImage')} onClick=${() => setImages(images.filter((_, j) => j !== i))}><${Icon} name="x" size=${11} /></button></span>`)}
    </div>`}
    ${problem && html`<div class="composer-problem">${problem}</div>`}
    <div class=${`composer${agent ? '' : ' disabled'}`}>
      <button class="icon-btn" title=${t('composer.attach')} disabled=${!agent} onClick=${() => fileInput.current.click()}><${Icon} name="clip" /></button>
      <input type="file" accept=${ACCEPTED_IMAGES.join(',')} multiple hidden ref=${fileInput}
        onChange=${(e) => { addFiles([...e.target.files]); e.target.value = ''; }} />
      <textarea ref=${textarea} rows="1" value=${draft} disabled=${!agent}
        placeholder=${ended ? t(ended) : agent ? (running ? t('composer.queue') : t('composer.placeholder')) : t('error.noAgent')}
        onInput=${(e) => setDraft(e.target.value)} onKeyDown=${onKeyDown} onPaste=${onPaste} aria-label=${t('composer.message')} />
      ${running
        ? html`<button class="send stop" title=${t('composer.interrupt')} onClick=${() => shell.interrupt()} disabled=${ui.stopping}>
            <${Icon} name="stop" size=${14} /><span>${ui.stopping ? t('composer.stopping') : t('composer.stop')}</span></button>`
        : html`<button class="send" title=${t('composer.send')} disabled=${!agent || (!draft.trim() && !images.length)} onClick=${submit}><${Icon} name="send" size=${15} /></button>`}
    </div>
    <div class="composer-hint">${running ? t('composer.hintEsc') : ''}${t('composer.hint')}</div>
  </div>`;
}
