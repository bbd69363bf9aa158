// The dashboard viewer's own words in English and Simplified Chinese
// (viewer contract, "Language"). What the viewer tells the agent (action
// results, <viewer-context>) stays English and is not here.
//
// MESSAGES is plain JSON inside JS: tests/test_viewer_i18n_catalogues.py
// reads it to check that both locales hold the same keys and placeholders
// and that every key the viewer's modules use exists.

import { translator as labelTranslator } from "/static/lib/viewer-helpers.js";

export const MESSAGES = {
  "en": {
    "grid.label": "Dashboard tiles; drag a title bar to move a tile, its corner to resize it, click a mark or a row to point at it",
    "hint": "Drag a title to move · drag a corner to resize · double-click a title to rename",
    "tile.dragTitle": "Drag to move this tile; double-click its title to rename it",
    "board.error": "dashboard.json cannot be read",
    "board.errorAt": "dashboard.json cannot be read (line {line})",
    "empty.title": "No board yet",
    "empty.body": "Ask the agent to make one: the tiles are described in {file}, the data lives under data/.",
    "renderer.missingTitle": "The chart library is missing",
    "renderer.missingBody": "The dashboard viewer's browser library was not built. Run {install} and reload.",
    "selection.row": "row {row}",
    "edit.label": "Tile title; Enter saves it into dashboard.json, Esc cancels",
    "edit.moveFailed": "The new layout was not saved: {message}",
    "edit.titleFailed": "The title was not saved: {message}"
  },
  "zh-CN": {
    "grid.label": "看板图块；拖动标题栏移动图块，拖动角落调整大小，点击图形或表格行以指向它",
    "hint": "拖动标题移动 · 拖动角落调整大小 · 双击标题重命名",
    "tile.dragTitle": "拖动以移动此图块；双击标题以重命名",
    "board.error": "无法读取 dashboard.json",
    "board.errorAt": "无法读取 dashboard.json（第 {line} 行）",
    "empty.title": "还没有看板",
    "empty.body": "请让智能体创建一个：图块写在 {file} 中，数据放在 data/ 目录下。",
    "renderer.missingTitle": "缺少图表库",
    "renderer.missingBody": "看板查看器的浏览器端库尚未构建。请运行 {install}，然后重新加载。",
    "selection.row": "第 {row} 行",
    "edit.label": "图块标题；按 Enter 写入 dashboard.json，按 Esc 取消",
    "edit.moveFailed": "新的布局没有保存：{message}",
    "edit.titleFailed": "标题没有保存：{message}"
  }
};

/** `t(key, params, fallback)` over MESSAGES in the locale `getLocale()`
 * names now (the shell's `translator`, docs/viewer-contract.md). */
export function translator(getLocale) {
  return labelTranslator(MESSAGES, getLocale);
}
