// The ACP backend's part of the page: the agent's own modes (session/set_mode),
// when the agent offers them, as a menu in the header beside the model.
// The shell loads this module only when the session's backend names it
// (GET /api/config: backendModule) and knows none of it (lib/backend-ui.js).

/** The modes to offer, from the session state the socket keeps. */
export function agentModes(session) {
  const modes = session && Array.isArray(session.agent_modes) ? session.agent_modes : [];
  return modes.filter((m) => m && typeof m.id === 'string' && typeof m.name === 'string');
}

/** The modes and the current one: what the socket said (session_update)
 *  wins over what the server listed when the page loaded. */
export function currentModes(session, listed) {
  const told = agentModes(session);
  const modes = told.length ? told : agentModes({ agent_modes: listed.modes });
  const modeId = (session && session.agent_mode) || listed.modeId || '';
  return { modes, modeId };
}

/** Called by the shell's backend slot; returns what the page shows. */
export function install({ html, useState, useEffect, t, api, store }) {
  // A page opened after the agent started has missed the session_update
  // that listed its modes (session_init does not carry them): ask for them.
  const listed = { modes: [], modeId: null };
  api.json('/api/acp/mode').then((listing) => {
    listed.modes = Array.isArray(listing.modes) ? listing.modes : [];
    listed.modeId = listing.modeId || null;
    store.notify();
  }).catch((error) => console.warn('the agent modes could not be listed', error));

  function AgentModeMenu() {
    // Drawn again on every change of the store, not only when the header
    // is: the modes may come in a session_update or the listing's answer.
    const [, redraw] = useState(0);
    useEffect(() => store.subscribe(() => redraw((n) => n + 1)), []);
    const [busy, setBusy] = useState(false);
    const [problem, setProblem] = useState('');
    const { modes, modeId } = currentModes(store.state.session, listed);
    if (modes.length === 0) return null;
    const choose = async (event) => {
      const chosen = event.target.value;
      setBusy(true);
      setProblem('');
      try {
        await api.json('/api/acp/mode', { method: 'POST', json: { modeId: chosen } });
      } catch (error) {
        setProblem(String((error && error.message) || error));
      } finally {
        setBusy(false);
      }
    };
    return html`<label class="agent-mode" title=${problem || t('acp.mode.switch')}>
      <span class="muted">${t('acp.mode.label')}</span>
      <select data-agent-mode disabled=${busy} value=${modeId} onChange=${choose}>
        ${modes.map((m) => html`<option key=${m.id} value=${m.id}>${m.name}</option>`)}
      </select>
    </label>`;
  }
  return { header: [AgentModeMenu] };
}
