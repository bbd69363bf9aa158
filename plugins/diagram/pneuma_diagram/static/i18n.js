// The diagram viewer's own words in English and Simplified Chinese (viewer
// contract, "Language"). What the viewer tells the agent (action results,
// <viewer-context>) stays English and is not here.
//
// MESSAGES is plain JSON inside JS: tests/test_viewer_i18n_catalogues.py
// reads it to check that both locales hold the same keys and placeholders
// and that every key viewer.js uses exists.

import { translator as labelTranslator } from "/static/lib/viewer-helpers.js";

export const MESSAGES = {
  "en": {
    "tabs.label": "Diagrams",
    "toolbar.label": "Diagram view",
    "canvas.label": "Diagram; drag to pan, scroll to zoom, click a node or edge to point at it",
    "zoom.in": "Zoom in",
    "zoom.out": "Zoom out",
    "zoom.fit": "Fit",
    "zoom.fitTitle": "Fit the whole diagram in view",
    "theme.toDark": "Dark",
    "theme.toLight": "Light",
    "theme.title": "Switch the diagram's theme",
    "error.title": "Syntax error at line {line}",
    "error.titleNoLine": "Syntax error",
    "error.source": "Source of {path}",
    "empty.title": "No diagrams yet",
    "empty.body": "Ask the agent to draw one: every {ext} file in the workspace opens here as a tab.",
    "renderer.missingTitle": "The Mermaid renderer is missing",
    "renderer.missingBody": "The diagram viewer's browser library was not built. Run {install} (or {build} in {folder}) and reload.",
    "selection.line": "line {line}",
    "tab.broken": "Does not parse: {message}",
    "tab.brokenAt": "Does not parse, line {line}: {message}",
    "edit.label": "Label; Enter saves it into the source, Esc cancels",
    "edit.empty": "A label cannot be empty.",
    "edit.multiline": "A label is one line here.",
    "edit.unmapped": "This label cannot be edited here: its text is not written as such in the source. Edit the .mmd file or ask the agent.",
    "edit.ambiguous": "This label cannot be edited here: its line says the same text more than once.",
    "edit.quote": "A double quote cannot go into this quoted label.",
    "edit.failed": "The label was not saved: {message}"
  },
  "zh-CN": {
    "tabs.label": "图表",
    "toolbar.label": "图表视图",
    "canvas.label": "图表；拖动以平移，滚动以缩放，点击节点或连线以指向它",
    "zoom.in": "放大",
    "zoom.out": "缩小",
    "zoom.fit": "适应",
    "zoom.fitTitle": "让整张图表适应视图",
    "theme.toDark": "深色",
    "theme.toLight": "浅色",
    "theme.title": "切换图表主题",
    "error.title": "第 {line} 行有语法错误",
    "error.titleNoLine": "语法错误",
    "error.source": "{path} 的源码",
    "empty.title": "还没有图表",
    "empty.body": "请让智能体画一张：工作区中的每个 {ext} 文件都会在这里以标签页打开。",
    "renderer.missingTitle": "缺少 Mermaid 渲染器",
    "renderer.missingBody": "图表查看器的浏览器端库尚未构建。请运行 {install}（或在 {folder} 中运行 {build}），然后重新加载。",
    "selection.line": "第 {line} 行",
    "tab.broken": "无法解析：{message}",
    "tab.brokenAt": "无法解析，第 {line} 行：{message}",
    "edit.label": "标签；按 Enter 写回源码，按 Esc 取消",
    "edit.empty": "标签不能为空。",
    "edit.multiline": "此处的标签只能是一行。",
    "edit.unmapped": "无法在此编辑这个标签：源码中没有原样写出它的文字。请编辑 .mmd 文件或让智能体修改。",
    "edit.ambiguous": "无法在此编辑这个标签：它所在的行多次出现相同的文字。",
    "edit.quote": "这个带引号的标签中不能放入双引号。",
    "edit.failed": "标签没有保存：{message}"
  }
};

/** `t(key, params, fallback)` over MESSAGES in the locale `getLocale()`
 * names now (the shell's `translator`, docs/viewer-contract.md). */
export function translator(getLocale) {
  return labelTranslator(MESSAGES, getLocale);
}
