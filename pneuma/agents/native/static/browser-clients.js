// The native backend's part of the page: the browser clients it drives, the
// picker that asks which one a task should use, and the selected client's
// tabs (its "twin"). The shell loads this module only when the session's
// backend names it (GET /api/config: backendModule) and knows none of it:
// it hands over its store, its socket and its Preact helpers through the
// backend slot (pneuma/web/lib/backend-ui.js).

/** The slice of the store this module keeps, as the socket leaves it. */
export function initialBrowserState() {
  return { selection: null, clients: [], selectedClientId: null, twins: {}, task: null };
}

/** Apply one socket message to the slice; false when it is not ours. */
export function applyBrowserMessage(browser, msg) {
  switch (msg.type) {
    case 'browser_selection':
      browser.clients = msg.candidates || browser.clients;
      if (msg.status === 'selected') {
        browser.selectedClientId = msg.clientId;
        browser.selection = null;
      } else if (msg.status === 'waiting') browser.selection = msg;
      return true;
    case 'extension_update':
      browser.clients = msg.clients || [];
      browser.selectedClientId = msg.selectedClientId || browser.selectedClientId;
      return true;
    case 'twin_update':
      browser.twins = { ...browser.twins, [msg.clientId]: msg.twin };
      return true;
    case 'task_update':
      browser.task = msg.task;
      if (msg.task && msg.task.status !== 'waiting_for_browser_selection') browser.selection = null;
      return true;
    default:
      return false;
  }
}

/** The slice after the HTTP listing (the socket brings only changes, and
 *  history does not keep them): what the socket said already wins. */
export function mergeListing(browser, listing) {
  if (!browser.clients.length) browser.clients = listing.clients || [];
  browser.selectedClientId = browser.selectedClientId || listing.selectedClientId || null;
  return browser;
}

/** Called by the shell's backend slot; returns what the page shows. */
export function install({ html, useState, t, api, store, shell, socket }) {
  const browser = initialBrowserState();
  store.extend((msg) => applyBrowserMessage(browser, msg));

  async function loadClients() {
    try {
      mergeListing(browser, await api.json('/api/extension/extension-list'));
      if (browser.selectedClientId && !browser.twins[browser.selectedClientId]) {
        const { clientId, twin } = await api.json(`/api/extension/twin?clientId=${encodeURIComponent(browser.selectedClientId)}`);
        if (!browser.twins[clientId]) browser.twins = { ...browser.twins, [clientId]: twin };
      }
      store.notify();
    } catch (error) {
      console.warn('could not load the browser clients', error);
    }
  }

  function BrowserPicker() {
    const clients = browser.clients.filter((c) => c.kind !== 'viewer'); // tabs like this one
    const [problem, setProblem] = useState(null);
    if (!browser.selection) return null;
    const pick = async (clientId) => {
      setProblem(null);
      // The socket when it is up (errors come back on it); HTTP otherwise.
      if (socket().send({ type: 'select_browser', clientId })) return;
      try {
        await api.json('/api/extension/select', { method: 'POST', json: { clientId } });
      } catch (error) {
        setProblem(error.message);
      }
    };
    const about = (c) => [c.metadata && c.metadata.kind, c.metadata && c.metadata.browserVersion].filter(Boolean).join(' · ');
    return html`<div class="modal-backdrop">
      <div class="modal" role="dialog" aria-modal="true" aria-labelledby="picker-title" data-kind="browser-picker">
        <h2 id="picker-title">${t('picker.title')}</h2>
        <p class="modal-summary">${t('picker.summary')}</p>
        ${clients.length === 0 && html`<p class="muted">${t('picker.none')}
          <code>pneuma browser-client --server ${location.origin} --token …</code></p>`}
        <ul class="browser-clients">${clients.map((c) => html`<li>
          <button class=${`browser-client${c.online ? '' : ' offline'}`} disabled=${!c.online} onClick=${() => pick(c.clientId)}>
            <span class="dot" /><span class="client-name">${c.name}</span>
            <span class="muted">${c.online ? t('picker.online') : t('picker.offline')}${about(c) ? ` · ${about(c)}` : ''}</span>
          </button></li>`)}</ul>
        ${problem && html`<p class="muted">${problem}</p>`}
        <div class="modal-actions"><button class="btn" onClick=${() => shell.interrupt()}>${t('picker.cancel')}</button></div>
      </div>
    </div>`;
  }

  function BrowserTwin() {
    const { selectedClientId, twins, clients } = browser;
    const twin = selectedClientId && twins[selectedClientId];
    if (!twin || !twin.tabs || twin.tabs.length === 0) return null;
    const client = clients.find((c) => c.clientId === selectedClientId);
    const online = !client || client.online;
    return html`<details class=${`browser-twin${online ? '' : ' offline'}`}>
      <summary title=${t('twin.title')}><span class="dot" />${client ? client.name : selectedClientId}${online ? '' : ` ${t('twin.offline')}`} · ${t('twin.tabs', { count: twin.tabs.length })}</summary>
      <ul>${twin.tabs.map((tab) => html`<li class=${tab.id === twin.activeTabId ? 'active' : ''} title=${tab.url}>
        <span class="tab-title">${tab.title || tab.url}</span><span class="tab-url">${tab.url}</span></li>`)}</ul>
    </details>`;
  }

  loadClients();
  return { header: [BrowserTwin], overlays: [BrowserPicker], state: browser };
}
