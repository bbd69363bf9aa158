// The CoAuthorViewer's panels: the side list of files and tasks, the board's
// columns and cards, a task with its plan, patches (side by side) and thread;
// mixed into its prototype (viewer.js).

import { COLUMNS, DONE_SHOWN, PLAN_PARTS, ago, attr, baseName, clock, esc, lineLabel, paperFiles, refLabel, renderInline } from "./text.js";

export const panels = {
  renderSide() {
    const s = this.state;
    const t = this.t;
    const count = (statuses) => s.tasks.filter((t) => statuses.includes(t.status)).length;
    const needs = count(["blocked", "awaiting_review"]);
    const files = paperFiles(this.ctx.files);
    const docs = files.filter((f) => f.path.endsWith(".md"));
    const depth = (p) => (p.includes("/") ? 1 : 0);
    const sources = files.filter((f) => !f.path.endsWith(".md")).sort((x, y) => depth(x.path) - depth(y.path) || x.path.localeCompare(y.path));
    const cur = (view, file) => (s.view === view && (file === undefined || s.file === file) ? " aria-current=\"page\"" : "");
    const refCounts = new Map();
    for (const t of s.tasks) {
      if (["done", "canceled"].includes(t.status)) continue;
      for (const r of t.artifactRefs || []) refCounts.set(r.path, (refCounts.get(r.path) || 0) + 1);
    }
    const fileButton = (f) => {
      const n = refCounts.get(f.path);
      const nested = f.path.includes("/");
      return `<button class="ca-nav ca-nav-file${nested ? " ca-nav-nested" : ""}" data-act="open-file" data-path="${attr(f.path)}"${cur("file", f.path)} title="${attr(f.path)}">
        <span class="ca-nav-name">${esc(nested ? baseName(f.path) : f.path)}</span>${n ? `<span class="ca-count" title="${attr(n === 1 ? t("nav.pointingOne") : t("nav.pointing", { count: n }))}">${n}</span>` : ""}</button>`;
    };
    // Files in folders under a folder heading: "sections/" then abstract.tex, method.tex, …
    const grouped = (list) => {
      let folder = null;
      return list.map((f) => {
        const dir = f.path.includes("/") ? f.path.slice(0, f.path.lastIndexOf("/") + 1) : "";
        const head = dir && dir !== folder ? `<div class="ca-side-dir">${esc(dir)}</div>` : "";
        folder = dir;
        return head + fileButton(f);
      }).join("");
    };
    this.side.innerHTML = `
      <button class="ca-nav ca-nav-board" data-act="board"${cur("board")}${s.view === "task" ? ' aria-current="true"' : ""}>
        <span class="ca-nav-name">${esc(t("nav.board"))}</span>${needs ? `<span class="ca-count ca-count-hot" title="${attr(t("nav.waiting"))}">${needs}</span>` : ""}</button>
      <div class="ca-side-h">${esc(t("nav.plan"))}</div>
      ${docs.map(fileButton).join("") || `<div class="ca-side-empty">${esc(t("nav.noOutline"))}</div>`}
      <div class="ca-side-h">${esc(t("nav.paper"))}</div>
      ${grouped(sources) || `<div class="ca-side-empty">${esc(t("nav.noTex"))}</div>`}`;
  },

  renderBoard() {
    const s = this.state;
    const t = this.t;
    this.head.innerHTML = `
      <h2 class="ca-title">${esc(t("board.title"))}</h2>
      <span class="ca-head-meta">${esc(s.tasks.length === 1 ? t("board.tasksOne") : t("board.tasks", { count: s.tasks.length }))}</span>
      <span class="ca-spacer"></span>
      ${s.forms.newTask === undefined ? `<button class="ca-btn ca-btn-primary" data-act="new-task">${esc(t("board.new"))}</button>` : ""}`;
    const form = s.forms.newTask === undefined ? "" : this.newTaskForm(null);
    const columns = COLUMNS.map((col) => {
      let tasks = s.tasks.filter((t) => col.statuses.includes(t.status));
      let more = 0;
      if (col.id === "done") {
        tasks = tasks.sort((a, b) => String(b.updatedAt).localeCompare(String(a.updatedAt)));
        more = Math.max(0, tasks.length - DONE_SHOWN);
        tasks = tasks.slice(0, DONE_SHOWN);
      }
      return `<section class="ca-col ca-col-${col.id}" data-column="${col.id}">
        <h3><span>${esc(t(`col.${col.id}`))}</span><span class="ca-col-n">${tasks.length + more}</span></h3>
        <div class="ca-col-hint">${esc(t(`col.${col.id}.hint`))}</div>
        ${tasks.map((task) => this.card(task, col.statuses.length > 1)).join("") || `<div class="ca-col-empty">${esc(t("col.none"))}</div>`}
        ${more ? `<div class="ca-col-empty">${esc(t("col.older", { count: more }))}</div>` : ""}
      </section>`;
    }).join("");
    this.body.innerHTML = `${form}<div class="ca-board">${columns}</div>`;
  },

  /** A task's status, priority or a patch's state in the page's language. */
  statusText(status) {
    return this.t(`status.${status}`, {}, status);
  },

  priorityText(priority) {
    return this.t(`priority.${priority}`, {}, priority);
  },

  patchStateText(state) {
    return this.t(`patch.${state}`, {}, String(state).replace("_", " "));
  },

  card(task, showStatus) {
    const t = this.t;
    const pending = Object.values(task.proposals || {}).filter((p) => p.state === "proposed").length;
    const questions = task.plan && task.plan.questions ? task.plan.questions.length : 0;
    const refs = (task.artifactRefs || []).map((r) => `<span class="ca-ref-chip">${esc(refLabel(r).replace(/^sections\//, ""))}</span>`).join("");
    const waiting = task.waitingOn === "person" ? `<span class="ca-you">${esc(t("card.yourMove"))}</span>` : "";
    return `<article class="ca-card ca-prio-${task.priority}" data-act="open-task" data-task="${attr(task.taskId)}" tabindex="0" data-status="${task.status}">
      <div class="ca-card-top"><span class="ca-id">${esc(task.taskId)}</span>
        ${showStatus ? `<span class="ca-pill ca-st-${task.status}">${esc(this.statusText(task.status))}</span>` : ""}
        <span class="ca-prio" title="${attr(t("priority.title"))}">${esc(this.priorityText(task.priority))}</span>${waiting}</div>
      <div class="ca-intent">${esc(task.intent)}</div>
      ${refs ? `<div class="ca-refs">${refs}</div>` : ""}
      <div class="ca-card-foot"><span class="ca-owner" title="${attr(t("card.assignedTo"))}">${esc(task.assignedTo || t("card.unassigned"))}</span>
        ${pending ? `<span class="ca-badge">${esc(pending === 1 ? t("card.patchesOne") : t("card.patches", { count: pending }))}</span>` : ""}
        ${questions && task.status === "blocked" ? `<span class="ca-badge ca-badge-warn">${esc(questions === 1 ? t("card.questionsOne") : t("card.questions", { count: questions }))}</span>` : ""}
        <span class="ca-when">${esc(ago(t, task.updatedAt))}</span></div>
    </article>`;
  },

  newTaskForm(sel) {
    const t = this.t;
    const title = sel ? t("form.newTaskOn", { file: baseName(sel.file), lines: lineLabel(t, sel.lines[0], sel.lines[1]) }) : t("form.newTask");
    return `<form class="ca-form ca-form-new" data-form="new-task">
      <label>${esc(title)}</label>
      <textarea data-field="newTask" rows="2" placeholder="${attr(t("form.newTaskPlaceholder"))}">${esc(this.state.forms.newTask || "")}</textarea>
      <div class="ca-form-row"><span class="ca-form-hint">${esc(t("form.newTaskHint"))}</span>
        <span class="ca-spacer"></span>
        <button type="button" class="ca-btn" data-act="cancel-form" data-form-name="newTask">${esc(t("form.cancel"))}</button>
        <button type="submit" class="ca-btn ca-btn-primary" data-act="create-task">${esc(t("form.create"))}</button></div>
    </form>`;
  },

  renderTask() {
    const s = this.state;
    const d = s.detail;
    const tr = this.t;
    if (!d || d.task.taskId !== s.taskId) {
      this.head.innerHTML = `<button class="ca-btn ca-btn-ghost" data-act="board">${esc(tr("task.back"))}</button><h2 class="ca-title">${esc(s.taskId)}</h2>`;
      this.body.innerHTML = `<div class="ca-empty">${esc(tr("task.loading"))}</div>`;
      return;
    }
    const t = d.task;
    const patchId = s.patchId && d.patches[s.patchId] ? s.patchId : d.currentPatchId || Object.keys(d.patches).pop() || null;
    const patch = patchId ? d.patches[patchId] : null;
    this.head.innerHTML = `
      <button class="ca-btn ca-btn-ghost" data-act="board" title="${attr(tr("task.backTitle"))}">${esc(tr("task.back"))}</button>
      <h2 class="ca-title"><span class="ca-id">${esc(t.taskId)}</span></h2>
      <span class="ca-pill ca-st-${t.status}">${esc(this.statusText(t.status))}</span>
      <span class="ca-prio" title="${attr(tr("priority.title"))}">${esc(this.priorityText(t.priority))}</span>
      <span class="ca-head-meta">${esc(t.assignedTo || tr("card.unassigned"))} · ${t.waitingOn === "person" ? `<b>${esc(tr("task.waitingOnYou"))}</b>` : esc(t.waitingOn === "agent" ? tr("task.agentsMove") : tr("task.closed"))}</span>
      <span class="ca-spacer"></span>
      ${["done", "canceled"].includes(t.status) ? "" : `<button class="ca-btn ca-btn-ghost" data-act="cancel-task">${esc(tr("task.cancel"))}</button>`}`;
    const refs = (t.artifactRefs || []).map((r) => `<a class="ca-ref-chip ca-link" data-act="open-file" data-path="${attr(r.path)}" data-line="${r.range ? r.range.lineStart : ""}">${esc(refLabel(r))}</a>`).join("");
    const warn = [];
    if (t.failure) warn.push(`<div class="ca-warn">${esc(tr("task.stopped", { reason: t.failure }))}</div>`);
    if (t.needsRebase) warn.push(`<div class="ca-warn">${esc(tr("task.needsRebase"))}</div>`);
    if (t.summary && t.status === "done") warn.push(`<div class="ca-ok">${esc(t.summary)}</div>`);
    const others = Object.values(d.patches).filter((p) => p.patchId !== patchId);
    this.body.innerHTML = `
      <div class="ca-task" data-task="${attr(t.taskId)}">
        <p class="ca-task-intent">${esc(t.intent)}</p>
        <div class="ca-task-meta">${refs}<span class="ca-head-meta">${esc(tr("task.createdBy", { who: t.createdBy, when: ago(tr, t.createdAt) }))}</span></div>
        ${warn.join("")}
        ${patch ? this.patchPanel(t, patch) : `<section class="ca-panel ca-panel-muted"><h3>${esc(tr("task.patch"))}</h3><p class="ca-muted">${esc(tr("task.noPatch"))}</p></section>`}
        ${others.length ? `<section class="ca-panel"><h3>${esc(tr("task.otherPatches"))}</h3><ul class="ca-plist">${others.map((p) => `
          <li><a class="ca-link" data-act="select-patch" data-patch="${attr(p.patchId)}">${esc(p.patchId)}</a>
          <span class="ca-pill ca-ps-${p.state}">${esc(this.patchStateText(p.state))}</span> ${esc(p.summary)}${p.reason ? ` <span class="ca-muted">— ${esc(p.reason)}</span>` : ""}</li>`).join("")}</ul></section>` : ""}
        ${this.planPanel(t)}
        ${this.threadPanel(d.thread)}
      </div>`;
  },

  patchPanel(t, p) {
    const s = this.state;
    const tr = this.t;
    const open = p.state === "proposed" && !["done", "canceled"].includes(t.status);
    const drift = p.files.filter((f) => f.drifted);
    const files = p.sideBySide.map((f) => `
      <div class="ca-sbs-file">
        <div class="ca-sbs-name"><a class="ca-link" data-act="open-file" data-path="${attr(f.path)}">${esc(f.path)}</a>
          <span class="ca-add">+${f.added}</span> <span class="ca-del">−${f.removed}</span>${f.creates ? ` <em>${esc(tr("patch.newFile"))}</em>` : ""}${f.deletes ? ` <em>${esc(tr("patch.deleted"))}</em>` : ""}</div>
        <table class="ca-sbs" data-path="${attr(f.path)}">
          <colgroup><col class="ca-sbs-n"><col><col class="ca-sbs-n"><col></colgroup>
          <thead><tr><th colspan="2">${esc(tr("patch.before"))}</th><th colspan="2">${esc(tr("patch.after"))}</th></tr></thead>
          <tbody>${f.rows.map(sbsRow).join("")}</tbody>
        </table>
      </div>`).join("");
    let actions = "";
    if (open) {
      if (s.forms.reject !== undefined) {
        actions = `<form class="ca-form ca-form-reject" data-form="reject">
          <label>${esc(tr("patch.rejectWhy", { patch: p.patchId }))}</label>
          <textarea data-field="reject" rows="2" placeholder="${attr(tr("patch.rejectPlaceholder"))}">${esc(s.forms.reject)}</textarea>
          <div class="ca-form-row"><span class="ca-spacer"></span>
            <button type="button" class="ca-btn" data-act="cancel-form" data-form-name="reject">${esc(tr("form.back"))}</button>
            <button type="submit" class="ca-btn ca-btn-bad" data-act="reject" data-patch="${attr(p.patchId)}">${esc(tr("patch.reject"))}</button></div>
        </form>`;
      } else if (s.forms.feedback !== undefined) {
        actions = `<form class="ca-form ca-form-feedback" data-form="feedback">
          <label>${esc(tr("patch.feedbackWhat"))}</label>
          <textarea data-field="feedback" rows="2" placeholder="${attr(tr("patch.feedbackPlaceholder"))}">${esc(s.forms.feedback)}</textarea>
          <div class="ca-form-row"><span class="ca-spacer"></span>
            <button type="button" class="ca-btn" data-act="cancel-form" data-form-name="feedback">${esc(tr("form.back"))}</button>
            <button type="submit" class="ca-btn ca-btn-primary" data-act="feedback">${esc(tr("patch.send"))}</button></div>
        </form>`;
      } else {
        actions = `<div class="ca-actions">
          <button class="ca-btn ca-btn-ok" data-act="accept" data-patch="${attr(p.patchId)}"${s.busy ? " disabled" : ""}>${esc(tr("patch.accept"))}</button>
          <button class="ca-btn ca-btn-bad" data-act="open-reject">${esc(tr("patch.openReject"))}</button>
          <button class="ca-btn" data-act="open-feedback">${esc(tr("patch.openFeedback"))}</button>
          <span class="ca-form-hint">${esc(p.files.length > 1 ? tr("patch.applyHintMany") : tr("patch.applyHintOne"))}</span>
        </div>`;
      }
    }
    return `<section class="ca-panel ca-patch" data-patch="${attr(p.patchId)}" data-state="${p.state}">
      <h3>${esc(tr("task.patch"))} <span class="ca-id">${esc(p.patchId)}</span> <span class="ca-pill ca-ps-${p.state}">${esc(this.patchStateText(p.state))}</span>
        <span class="ca-head-meta">${esc(tr("patch.by", { who: p.proposedBy, when: ago(tr, p.proposedAt) }))}${p.candidate ? ` · ${esc(tr("patch.alternative", { n: p.candidate }))}` : ""}</span></h3>
      ${p.summary ? `<p class="ca-summary">${esc(p.summary)}</p>` : ""}
      ${p.reason ? `<p class="ca-muted">${esc(tr(p.state === "rejected" ? "patch.wasRejected" : "patch.notApplied", { reason: p.reason }))}</p>` : ""}
      ${open && drift.length ? `<div class="ca-warn">${esc(tr("patch.drift", { files: drift.map((f) => f.path).join(", ") }))}</div>` : ""}
      ${files}
      ${actions}
    </section>`;
  },

  planPanel(t) {
    const plan = t.plan;
    const tr = this.t;
    if (!plan) return `<section class="ca-panel ca-panel-muted"><h3>${esc(tr("plan.title"))}</h3><p class="ca-muted">${esc(tr("plan.none"))}</p></section>`;
    const list = (items) => `<ul>${items.map((x) => `<li>${renderInline(x)}</li>`).join("")}</ul>`;
    const parts = PLAN_PARTS.filter((k) => plan[k] && plan[k].length).map((k) => `<div class="ca-plan-part"><h4>${esc(tr(`plan.${k}`))}</h4>${list(plan[k])}</div>`);
    let questions = "";
    if (plan.questions && plan.questions.length) {
      const blocked = t.status === "blocked";
      const form = blocked ? `<form class="ca-form ca-form-answer" data-form="answer">
          <textarea data-field="answer" rows="2" placeholder="${attr(tr("plan.answerPlaceholder"))}">${esc(this.state.forms.answer || "")}</textarea>
          <div class="ca-form-row"><span class="ca-spacer"></span><button type="submit" class="ca-btn ca-btn-primary" data-act="answer">${esc(tr("plan.answer"))}</button></div>
        </form>` : "";
      questions = `<div class="ca-plan-part ca-questions${blocked ? " ca-questions-open" : ""}"><h4>${esc(tr("plan.questions"))}</h4>${list(plan.questions)}${form}</div>`;
    }
    return `<section class="ca-panel ca-plan"><h3>${esc(tr("plan.title"))}</h3>
      <div class="ca-plan-part"><h4>${esc(tr("plan.goal"))}</h4><p>${renderInline(plan.goal)}</p></div>
      ${parts.join("")}${questions}</section>`;
  },

  threadPanel(thread) {
    const tr = this.t;
    const rows = thread.map((e) => `<li class="ca-ev ca-ev-${esc(e.type)}" data-seq="${e.seq}">
      <span class="ca-ev-time" title="${attr(e.timestamp)}">${esc(clock(e.timestamp))}</span>
      <span class="ca-ev-type" title="${attr(e.type)}">${esc(tr(`event.${e.type}`, {}, e.type))}</span>
      <span class="ca-ev-who">${esc(e.authorActorId)}</span>
      <span class="ca-ev-detail">${esc(e.detail || "")}</span></li>`).join("");
    const count = thread.length === 1 ? tr("thread.eventsOne") : tr("thread.events", { count: thread.length });
    return `<section class="ca-panel ca-thread"><h3>${esc(tr("thread.title"))} <span class="ca-head-meta">${esc(count)}</span></h3><ol>${rows}</ol></section>`;
  },
};

function sbsSide(side, cls) {
  if (!side) return '<td class="ca-n ca-void"></td><td class="ca-t ca-void"></td>';
  let text = esc(side.text);
  if (side.mark) {
    const [a, b] = side.mark;
    text = `${esc(side.text.slice(0, a))}<mark>${esc(side.text.slice(a, b))}</mark>${esc(side.text.slice(b))}`;
  }
  return `<td class="ca-n ${cls}">${side.n}</td><td class="ca-t ${cls}">${text || " "}</td>`;
}

function sbsRow(row) {
  if (row.kind === "hunk") return `<tr class="ca-hunk"><td colspan="4">${esc(row.header)}</td></tr>`;
  const left = row.kind === "same" ? "" : "ca-old";
  const right = row.kind === "same" ? "" : "ca-new";
  return `<tr class="ca-row ca-row-${row.kind}">${sbsSide(row.left, left)}${sbsSide(row.right, right)}</tr>`;
}
