// The draw viewer's own words, in the shell's two languages (docs/viewer-contract.md,
// "Language"). What the viewer says to the agent (action results, the
// <viewer-context>) stays English and is not here.
//
// MESSAGES is plain JSON between the braces: tests/test_viewer_i18n_catalogues.py
// reads it to check that both locales hold the same keys and {placeholders}.

import { translator as labelTranslator } from "/static/lib/viewer-helpers.js";

export const MESSAGES = {
  "en": {
    "picker.title": "Open another drawing",
    "picker.label": "Drawing",
    "picker.new": "New drawing",
    "excalidraw.menu": "Menu",
    "new.prompt": "Name of the new drawing",
    "empty.title": "No drawing yet",
    "empty.text": "Ask the agent to draw something, or start a drawing yourself; each drawing is a .excalidraw file in the workspace.",
    "empty.deleted": "{file} was deleted.",
    "empty.start": "Start a drawing",
    "load.title": "The drawing editor could not load",
    "load.text": "The Excalidraw bundle is missing or broken. Run scripts/build-web (or npm ci && npm run build in plugins/draw/web) and reload. ({message})",
    "invalid.title": "{file} cannot be shown",
    "invalid.text": "{problem}. Fix the file (or ask the agent to) and it will appear here.",
    "invalid.json": "It is not valid JSON: {message}",
    "invalid.object": "It is not a JSON object",
    "invalid.elements": "It has no \"elements\" list",
    "notice.saveFailed": "Could not save {file}: {message}",
    "notice.deleted": "{file} was deleted; showing {next}.",
    "notice.halfWritten": "{file} is not a valid drawing right now ({problem}); still showing the last good version.",
    "chip.elements": "{name} · {count} elements",
    "chip.region": "{name} · region {width}×{height}",
    "type.rectangle": "rectangle",
    "type.ellipse": "ellipse",
    "type.diamond": "diamond",
    "type.arrow": "arrow",
    "type.line": "line",
    "type.text": "text",
    "type.freedraw": "freehand stroke",
    "type.image": "image",
    "type.frame": "frame",
    "pin.title": "Review pin {number}"
  },
  "zh-CN": {
    "picker.title": "打开其他绘图",
    "picker.label": "绘图",
    "picker.new": "新建绘图",
    "excalidraw.menu": "菜单",
    "new.prompt": "新绘图的名称",
    "empty.title": "还没有绘图",
    "empty.text": "请智能体画点什么，或者自己开始画；每张绘图都是工作区中的一个 .excalidraw 文件。",
    "empty.deleted": "{file} 已被删除。",
    "empty.start": "开始绘图",
    "load.title": "绘图编辑器无法加载",
    "load.text": "Excalidraw 程序包缺失或已损坏。请运行 scripts/build-web（或在 plugins/draw/web 中运行 npm ci && npm run build），然后刷新页面。（{message}）",
    "invalid.title": "无法显示 {file}",
    "invalid.text": "{problem}。修正该文件（或请智能体修正）后，它就会显示在这里。",
    "invalid.json": "不是有效的 JSON：{message}",
    "invalid.object": "不是 JSON 对象",
    "invalid.elements": "缺少 \"elements\" 列表",
    "notice.saveFailed": "无法保存 {file}：{message}",
    "notice.deleted": "{file} 已被删除，现在显示 {next}。",
    "notice.halfWritten": "{file} 目前不是有效的绘图（{problem}），仍显示上一个有效版本。",
    "chip.elements": "{name} · {count} 个元素",
    "chip.region": "{name} · 区域 {width}×{height}",
    "type.rectangle": "矩形",
    "type.ellipse": "椭圆",
    "type.diamond": "菱形",
    "type.arrow": "箭头",
    "type.line": "线条",
    "type.text": "文本",
    "type.freedraw": "手绘笔画",
    "type.image": "图片",
    "type.frame": "画框",
    "pin.title": "审阅标记 {number}"
  }
};

/** `t(key, params, fallback)` over MESSAGES in the locale `getLocale()`
 * names now (the shell's `translator`, docs/viewer-contract.md). */
export function translator(getLocale) {
  return labelTranslator(MESSAGES, getLocale);
}

/** Excalidraw's langCode for the page's locale (it ships zh-CN; en is its default). */
export function excalidrawLangCode(locale) {
  return locale === "zh-CN" ? "zh-CN" : "en";
}
