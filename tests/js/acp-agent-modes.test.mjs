// The ACP backend's browser module (pneuma/agents/acp/static/agent-modes.js):
// which agent modes the header offers, and which one shows as chosen.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import './browser-globals.mjs';
import { agentModes, currentModes } from '../../pneuma/agents/acp/static/agent-modes.js';

const MODES = [{ id: 'default', name: 'Ask' }, { id: 'plan', name: 'Plan' }];

test('only well-formed modes are offered', () => {
  assert.deepEqual(agentModes(null), []);
  assert.deepEqual(agentModes({ agent_modes: 'x' }), []);
  assert.deepEqual(agentModes({ agent_modes: [...MODES, { id: 3 }, null, { name: 'n' }] }), MODES);
});

test('what the socket said wins over the listing the page loaded with', () => {
  const listed = { modes: MODES, modeId: 'default' };
  assert.deepEqual(currentModes({}, listed), { modes: MODES, modeId: 'default' });
  assert.deepEqual(currentModes({ agent_mode: 'plan' }, listed), { modes: MODES, modeId: 'plan' });
  const told = [{ id: 'auto', name: 'Auto' }];
  assert.deepEqual(currentModes({ agent_modes: told, agent_mode: 'auto' }, listed),
    { modes: told, modeId: 'auto' });
  assert.deepEqual(currentModes(null, { modes: [], modeId: null }), { modes: [], modeId: '' });
});
