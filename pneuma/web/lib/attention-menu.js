// The header's bell: the page's three switches for what happens while the
// person looks elsewhere (docs/notifications.md): notifications, their
// sound, and following the agent. Each is kept with the person's
// preferences (lib/preferences.js), so it holds in every workspace.

import { html, useState, useRef } from '../vendor/preact-htm.js';
import { t } from './i18n.js';
import { preference, setPreference } from './preferences.js';
import { useDismiss } from './dismiss.js';
import { followingOn } from './follow.js';
import { notificationsOn } from './notify.js';
import { store, ui } from './shell-state.js';

const BELL = 'M6 16V11a6 6 0 0 1 12 0v5l2 2H4zM10 20a2 2 0 0 0 4 0';

function Switch({ name, checked, disabled, label, hint, onChange }) {
  return html`<label class=${`attention-row${disabled ? ' disabled' : ''}`} data-switch=${name}>
    <input type="checkbox" role="switch" checked=${checked} disabled=${disabled}
      onChange=${(e) => onChange(e.target.checked)} />
    <span class="attention-label">${label}${hint && html`<span class="muted">${hint}</span>`}</span>
  </label>`;
}

export function AttentionMenu() {
  const [open, setOpen] = useState(false);
  const ref = useRef(null);
  useDismiss(ref, open, () => setOpen(false));
  const notifier = ui.notifier;
  if (!notifier || notifier.headless) return null;
  const api = window.Notification;
  const blocked = !api || api.permission === 'denied';
  const set = (name, value) => {
    setPreference(name, value);
    store.notify();
  };
  const notifications = notificationsOn(window);
  return html`<div class="menu attention-menu" ref=${ref}>
    <button class="icon-btn attention-btn" title=${t('attention.menu')} aria-label=${t('attention.menu')}
        aria-haspopup="true" aria-expanded=${open} onClick=${() => setOpen(!open)}>
      <svg class="icon" width="16" height="16" viewBox="0 0 24 24" aria-hidden="true" fill="none" stroke="currentColor"
        stroke-width="1.8" stroke-linecap="round" stroke-linejoin="round"><path d=${BELL} /></svg>
    </button>
    ${open && html`<div class="menu-pop attention-pop" role="group" aria-label=${t('attention.menu')}>
      <${Switch} name="notifications" checked=${notifications} disabled=${blocked}
        label=${t('attention.notifications')}
        hint=${blocked ? t('attention.blocked') : t('attention.notificationsHint')}
        onChange=${(on) => notifier.turnOn(on).then(() => store.notify())} />
      <${Switch} name="notificationSound" checked=${preference('notificationSound') === true}
        label=${t('attention.sound')}
        onChange=${(on) => { if (on) notifier.primeSound(); set('notificationSound', on); }} />
      <${Switch} name="followAgent" checked=${followingOn()}
        label=${t('attention.follow')} hint=${t('attention.followHint')}
        onChange=${(on) => { set('followAgent', on); if (!on && ui.follower) ui.follower.stop(); }} />
    </div>`}
  </div>`;
}
