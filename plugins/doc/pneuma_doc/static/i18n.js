// The doc viewer's own words in English and Simplified Chinese (viewer
// contract, "Language"). The shell's ctx.t knows only the shell's keys, so
// the viewer keeps this table and follows ctx.locale, falling back to
// English. What the viewer tells the agent (action results,
// <viewer-context>) stays English and is not here.
//
// MESSAGES is plain JSON inside JS: tests/test_viewer_i18n_catalogues.py
// reads it to check that both locales hold the same keys and placeholders
// and that every key viewer.js uses exists.

import { translator as labelTranslator } from "/static/lib/viewer-helpers.js";

export const MESSAGES = {
  "en": {
    "tabs.label": "Documents",
    "toc.label": "Table of contents",
    "toc.button": "Contents",
    "toc.heading": "On this page",
    "heading.anchor": "Link to this section",
    "link.missing": "{path} is not in the workspace",
    "file.tooLarge": "{path} is too large to show here",
    "file.openRaw": "Open the raw file",
    "empty.title": "No documents yet",
    "empty.body": "Ask the agent to write one: every {ext} file in the workspace opens here as a tab.",
    "renderer.missingTitle": "The Markdown renderer is missing",
    "renderer.missingBody": "The doc viewer's browser libraries were not built. Run {install} (or {build} in {folder}) and reload.",
    "edit.label": "Edit this text (Enter saves, Esc cancels)",
    "edit.refused": "This block cannot be edited in place; ask the agent or edit the file"
  },
  "zh-CN": {
    "tabs.label": "文档",
    "toc.label": "目录",
    "toc.button": "目录",
    "toc.heading": "本页内容",
    "heading.anchor": "链接到本节",
    "link.missing": "{path} 不在工作区中",
    "file.tooLarge": "{path} 太大，无法在这里显示",
    "file.openRaw": "打开原始文件",
    "empty.title": "还没有文档",
    "empty.body": "请让智能体写一篇：工作区中的每个 {ext} 文件都会在这里以标签页打开。",
    "renderer.missingTitle": "缺少 Markdown 渲染器",
    "renderer.missingBody": "文档查看器的浏览器端库尚未构建。请运行 {install}（或在 {folder} 中运行 {build}），然后重新加载。",
    "edit.label": "编辑这段文字（回车保存，Esc 取消）",
    "edit.refused": "这一块不能就地编辑；请让智能体修改或直接编辑文件"
  }
};

/** `t(key, params, fallback)` over MESSAGES in the locale `getLocale()`
 * names now (the shell's `translator`, docs/viewer-contract.md). */
export function translator(getLocale) {
  return labelTranslator(MESSAGES, getLocale);
}
