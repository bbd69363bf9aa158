// The agent's questions and plans, as cards in the permission dock (issue 26,
// item 4; docs/backends.md, "Questions and plans"). Both arrive as a
// `permission_request` (docs/protocol.md): AskUserQuestion (every backend
// that can ask the person sends its questions in that shape) becomes a card
// with each question's options and an "Other" answer; ExitPlanMode becomes the plan with
// "Approve" and "Keep planning". The answer is the permission answer: allow
// with `updated_input` = the input plus `answers` {question text: chosen
// labels, comma-joined}, or deny with the person's note.
//
// What the agent sent is untrusted: every text is shown as text (the plan as
// Markdown through the page's one renderer, raw HTML off), and a request whose
// shape this card cannot show faithfully falls back to the generic permission
// card, which can always be answered, so a turn never waits on a broken card.

import { html, useState } from '../vendor/preact-htm.js';
import { renderMarkdown } from './markdown.js';
import { t } from './i18n.js';
import { shell, store } from './shell-state.js';

// Beyond these the request gets the generic card (the tool's own schema allows
// 1-4 questions of 2-4 options; other agents' requests may have no bound).
const MAX_QUESTIONS = 8;
const MAX_OPTIONS = 50;
const MAX_TEXT = 100_000; // characters of any one text
const ANSWER_SEPARATOR = ', '; // how several chosen labels are joined (docs/backends.md)

// Sent to the agent, so English whatever the page's language.
const SKIPPED = 'The person skipped these questions in the Pneuma page.';
const KEEP_PLANNING = 'The person wants you to keep planning.';

function text(value, { required = false } = {}) {
  if (value == null && !required) return '';
  if (typeof value !== 'string' || value.length > MAX_TEXT) return null;
  if (required && !value.trim()) return null;
  return value;
}

function option(raw) {
  if (!raw || typeof raw !== 'object') return null;
  const label = text(raw.label, { required: true });
  const description = text(raw.description);
  if (label === null || description === null) return null;
  return { label, description };
}

function question(raw) {
  if (!raw || typeof raw !== 'object' || Array.isArray(raw)) return null;
  const asked = text(raw.question, { required: true });
  const header = text(raw.header);
  const rawOptions = raw.options == null ? [] : raw.options;
  if (asked === null || header === null || !Array.isArray(rawOptions) || rawOptions.length > MAX_OPTIONS) return null;
  const options = rawOptions.map(option);
  if (options.includes(null)) return null;
  return { question: asked, header, options, multiSelect: raw.multiSelect === true, secret: raw.secret === true };
}

/** The questions of an AskUserQuestion request, checked; null when it is not
 *  one, or not one this card can show (then the generic card shows it). */
export function questionsOf(request) {
  if (!request || request.tool_name !== 'AskUserQuestion') return null;
  const input = request.input;
  const raw = input && typeof input === 'object' ? input.questions : null;
  if (!Array.isArray(raw) || !raw.length || raw.length > MAX_QUESTIONS) return null;
  const questions = raw.map(question);
  if (questions.includes(null)) return null;
  // Answers are keyed by the question's text: two alike could not both be answered.
  if (new Set(questions.map((q) => q.question)).size !== questions.length) return null;
  return questions;
}

/** The plan of an ExitPlanMode request: its own `plan`, else the one the
 *  model put in the tool call (the CLI sends the request's input without it
 *  when the plan is in its plan file); '' when neither has one. */
export function planOf(request) {
  const own = request.input && typeof request.input === 'object' ? request.input.plan : null;
  if (typeof own === 'string' && own.trim()) return own;
  const use = request.tool_use_id && store.state.toolUses.get(request.tool_use_id);
  const called = use && use.block && use.block.input && use.block.input.plan;
  return typeof called === 'string' ? called : '';
}

/** One question's answer from what the person picked: the chosen labels in
 *  the options' order, then their own text; '' while nothing is chosen. */
export function answerOf(q, picked) {
  const chosen = q.options.filter((_, i) => picked.options.has(i)).map((o) => o.label);
  const own = picked.other ? picked.otherText.trim() : '';
  if (own) chosen.push(own);
  return chosen.join(ANSWER_SEPARATOR);
}

function Question({ q, index, picked, onPick, onSubmit }) {
  const name = `question-${index}`;
  const kind = q.multiSelect ? 'checkbox' : 'radio';
  const choose = (i) => {
    const options = new Set(q.multiSelect ? picked.options : []);
    if (q.multiSelect && options.has(i)) options.delete(i);
    else options.add(i);
    onPick({ ...picked, options, other: q.multiSelect ? picked.other : false });
  };
  const chooseOther = (on) => onPick({ ...picked, other: on, options: q.multiSelect ? picked.options : new Set() });
  return html`<fieldset class="question" data-question=${index}>
    <legend>
      ${q.header && html`<span class="question-chip">${q.header}</span>`}
      <span class="question-text">${q.question}</span>
      <span class="question-hint muted">${q.multiSelect ? t('cards.question.pickAny') : t('cards.question.pickOne')}</span>
    </legend>
    ${q.options.map((o, i) => html`<label class="question-option" data-option=${i}>
      <input type=${kind} name=${name} checked=${picked.options.has(i)} onChange=${() => choose(i)} />
      <span class="option-label">${o.label}</span>
      ${o.description && html`<span class="option-description muted">${o.description}</span>`}
    </label>`)}
    <label class="question-option other" data-option="other">
      <input type=${kind} name=${name} checked=${picked.other} onChange=${(e) => chooseOther(q.multiSelect ? e.target.checked : true)} />
      <span class="option-label">${t('cards.question.other')}</span>
      <input class="other-text" type=${q.secret ? 'password' : 'text'} value=${picked.otherText}
        placeholder=${t('cards.question.otherPlaceholder')} aria-label=${t('cards.question.other')}
        onInput=${(e) => onPick({ ...picked, otherText: e.target.value, other: true,
          options: q.multiSelect ? picked.options : new Set() })}
        onKeyDown=${(e) => { if (e.key === 'Enter') onSubmit(); }} />
    </label>
  </fieldset>`;
}

export function QuestionCard({ request, questions }) {
  const [picks, setPicks] = useState(() => questions.map(() => ({ options: new Set(), other: false, otherText: '' })));
  const answers = questions.map((q, i) => answerOf(q, picks[i]));
  const complete = answers.every(Boolean);
  const submit = () => {
    if (!complete) return;
    const byQuestion = {};
    questions.forEach((q, i) => { byQuestion[q.question] = answers[i]; });
    shell.answerPermission(request, 'allow', undefined, { ...request.input, answers: byQuestion });
  };
  return html`<div class="permission question-card" data-request=${request.request_id}>
    <div class="perm-head"><span class="perm-badge question-badge">${t('cards.question.badge')}</span></div>
    <div class="questions">
      ${questions.map((q, i) => html`<${Question} key=${i} q=${q} index=${i} picked=${picks[i]}
        onPick=${(next) => setPicks(picks.map((p, j) => (j === i ? next : p)))} onSubmit=${submit} />`)}
    </div>
    <div class="perm-actions">
      <button class="btn skip" onClick=${() => shell.answerPermission(request, 'deny', SKIPPED)}>${t('cards.question.skip')}</button>
      <button class="btn primary submit" disabled=${!complete} onClick=${submit}>${t('cards.question.submit')}</button>
    </div>
  </div>`;
}

export function PlanCard({ request }) {
  const [note, setNote] = useState('');
  const [keeping, setKeeping] = useState(false);
  const plan = planOf(request);
  const keepPlanning = () => shell.answerPermission(request, 'deny', note.trim() || KEEP_PLANNING);
  return html`<div class="permission plan-card" data-request=${request.request_id}>
    <div class="perm-head">
      <span class="perm-badge plan-badge">${t('cards.plan.badge')}</span>
      <span class="perm-title">${t('cards.plan.title')}</span>
    </div>
    ${!plan ? html`<div class="plan-text muted">${t('cards.plan.missing')}</div>`
      // A plan too long to lay out as Markdown in a moment is shown as its text.
      : plan.length > MAX_TEXT ? html`<div class="plan-text plain">${plan}</div>`
      : html`<div class="md plan-text" dangerouslySetInnerHTML=${{ __html: renderMarkdown(plan) }} />`}
    ${keeping && html`<input class="perm-note plan-note" placeholder=${t('cards.plan.notePlaceholder')} value=${note}
      onInput=${(e) => setNote(e.target.value)} onKeyDown=${(e) => { if (e.key === 'Enter') keepPlanning(); }} autofocus />`}
    <div class="perm-actions">
      ${keeping
        ? html`<button class="btn" onClick=${() => setKeeping(false)}>${t('cards.plan.back')}</button>
               <button class="btn keep-planning" onClick=${keepPlanning}>${t('cards.plan.send')}</button>`
        : html`<button class="btn keep-planning" onClick=${() => setKeeping(true)}>${t('cards.plan.keepPlanning')}</button>
               <button class="btn primary approve" onClick=${() => shell.answerPermission(request, 'allow')}>${t('cards.plan.approve')}</button>`}
    </div>
  </div>`;
}

/** Whether a request asks the person a question or a plan (rather than
 *  for permission): the chat then says it waits for an answer. */
export function asksThePerson(request) {
  return Boolean(request) && (request.tool_name === 'AskUserQuestion' || request.tool_name === 'ExitPlanMode');
}

/** The card for a request that asks the person a question or a plan; null
 *  for any other (the caller shows its permission card). A question this
 *  card cannot show gets `Generic`, under a line saying why. */
export function questionCardFor(request, Generic) {
  if (request.tool_name === 'ExitPlanMode') return html`<${PlanCard} key=${request.request_id} request=${request} />`;
  if (request.tool_name !== 'AskUserQuestion') return null;
  const questions = questionsOf(request);
  if (questions) return html`<${QuestionCard} key=${request.request_id} request=${request} questions=${questions} />`;
  return html`<div class="question-fallback" key=${request.request_id}>
    <div class="notice-body muted">${t('cards.question.fallback')}</div>
    <${Generic} request=${request} />
  </div>`;
}
