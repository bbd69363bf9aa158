// The print viewer's own words in English and Simplified Chinese (viewer
// contract, "Language"); ctx.locale picks, English is the fallback. What
// the viewer tells the agent (action results, <viewer-context>) stays
// English and is not here.
//
// MESSAGES is plain JSON inside JS: tests/test_viewer_i18n_catalogues.py
// checks both locales hold the same keys and placeholders.

import { translator as labelTranslator } from "/static/lib/viewer-helpers.js";

export const MESSAGES = {
  "en": {
    "untitled": "Untitled document",
    "counter": "Page {page} of {count}",
    "zoom.label": "Zoom",
    "zoom.fit-width": "Fit width",
    "zoom.fit-page": "Fit page",
    "list.label": "Pages",
    "chip.page": "Page {page}",
    "sheet.overflows": "Overflows by {mm} mm",
    "sheet.missing": "{file} is listed in print.json but does not exist.",
    "sheet.notText": "{file} is not a text file: a page is written as HTML.",
    "problem.missing": "This folder has no print.json: it is not a print document yet.",
    "problem.json": "print.json is not valid JSON: {message}",
    "problem.object": "print.json must hold a JSON object.",
    "problem.paper": "print.json names a paper size the viewer does not know: use A4, Letter, Legal, A5, B5 or {\"width_mm\", \"height_mm\"}.",
    "problem.paperRange": "print.json: a custom paper must be {min}–{max} mm on each side.",
    "problem.orientation": "print.json: the orientation must be portrait or landscape.",
    "problem.margin": "print.json: the margins must be millimetres that leave room on the page.",
    "problem.numbers": "print.json: pageNumbers must be {\"show\", \"start\", \"skipFirst\"}.",
    "problem.pages": "print.json: pages must be a list of {\"file\", \"title\"}.",
    "problem.pageFile": "print.json: page {page} has no file inside the workspace.",
    "edit.refused": "This text cannot be edited here: change it in the page's file, or ask the agent.",
    "edit.failed": "The edit was not saved: {message}"
  },
  "zh-CN": {
    "untitled": "未命名文档",
    "counter": "第 {page} 页，共 {count} 页",
    "zoom.label": "缩放",
    "zoom.fit-width": "适合宽度",
    "zoom.fit-page": "适合整页",
    "list.label": "页面",
    "chip.page": "第 {page} 页",
    "sheet.overflows": "超出 {mm} 毫米",
    "sheet.missing": "print.json 列出了 {file}，但该文件不存在。",
    "sheet.notText": "{file} 不是文本文件：页面应以 HTML 编写。",
    "problem.missing": "此文件夹中没有 print.json：还不是印刷文档。",
    "problem.json": "print.json 不是有效的 JSON：{message}",
    "problem.object": "print.json 必须是一个 JSON 对象。",
    "problem.paper": "print.json 中的纸张尺寸无法识别：请使用 A4、Letter、Legal、A5、B5 或 {\"width_mm\", \"height_mm\"}。",
    "problem.paperRange": "print.json：自定义纸张的每条边必须在 {min}–{max} 毫米之间。",
    "problem.orientation": "print.json：方向必须是 portrait（纵向）或 landscape（横向）。",
    "problem.margin": "print.json：页边距必须是以毫米为单位、并为内容留出空间的数值。",
    "problem.numbers": "print.json：pageNumbers 必须是 {\"show\", \"start\", \"skipFirst\"}。",
    "problem.pages": "print.json：pages 必须是由 {\"file\", \"title\"} 组成的列表。",
    "problem.pageFile": "print.json：第 {page} 页没有位于工作区内的文件。",
    "edit.refused": "这段文字不能在这里直接修改：请在页面文件中修改，或请智能体修改。",
    "edit.failed": "修改未能保存：{message}"
  }
};

/** `t(key, params)` over MESSAGES in the locale `getLocale()` names now. */
export function translator(getLocale) {
  return labelTranslator(MESSAGES, getLocale);
}
