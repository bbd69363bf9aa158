// The slide viewer's own words in English and Simplified Chinese (viewer
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
    "toolbar.outline": "Show or hide the slide outline",
    "toolbar.prev": "Previous slide (←)",
    "toolbar.next": "Next slide (→)",
    "toolbar.views": "View",
    "toolbar.single": "One slide",
    "toolbar.grid": "All slides in a grid",
    "toolbar.present": "Present",
    "toolbar.presentTitle": "Present full screen (Esc to leave)",
    "toolbar.fit": "Check fit",
    "toolbar.fitTitle": "Measure every slide for content that sticks out",
    "nav.label": "Slides",
    "nav.dragHint": "Drag to reorder",
    "frame.title": "Slide",
    "badge.missing": "missing",
    "badge.missingTitle": "{file} does not exist",
    "badge.overflow": "overflow {amount}",
    "stage.position": "Slide {n} of {total}",
    "stage.empty": "This deck has no slides yet. Ask the agent for an outline, or add slides to manifest.json.",
    "missing.eyebrow": "Missing slide",
    "missing.body": "manifest.json lists this file, but it does not exist.",
    "manifest.missing": "manifest.json does not exist",
    "manifest.invalidJson": "manifest.json is not valid JSON: {detail}",
    "manifest.notObject": "manifest.json must hold a JSON object",
    "manifest.noSlides": "manifest.json has no \"slides\" array",
    "manifest.stale": "{error}. Showing the last version that could be read.",
    "present.label": "Presentation",
    "present.hint": "← → to move · Esc to leave",
    "chip.slide": "Slide {n} · {title}",
    "chip.element": "Slide {n} · {element}",
    "reorder.refused": "Cannot reorder: {reason}.",
    "reorder.moved": "Moved “{title}” to position {n}.",
    "save.failed": "Could not save manifest.json: {message}",
    "fit.allFit": "Every slide checked ({count}) fits the {size} canvas.",
    "fit.someOverflow": "{bad} of {count} slides checked do not fit the {size} canvas: {files}",
    "extra.heading": "Not in the deck",
    "extra.hint": "Slide files that manifest.json does not list",
    "extra.add": "Add to deck",
    "extra.addTitle": "Append {file} to manifest.json",
    "extra.added": "Added “{title}” to the deck as slide {n}.",
    "extra.refused": "Cannot add to the deck: {reason}.",
    "problem.overflow": "The content sticks out of the slide by {amount}: {where}",
    "pins.count": "{count} pinned comments on this slide",
    "edit.refused": "This text cannot be edited here: edit it by hand in the slide's file, or ask the agent.",
    "edit.failed": "The edit was not saved: {message}"
  },
  "zh-CN": {
    "toolbar.outline": "显示或隐藏幻灯片大纲",
    "toolbar.prev": "上一页（←）",
    "toolbar.next": "下一页（→）",
    "toolbar.views": "视图",
    "toolbar.single": "单页视图",
    "toolbar.grid": "以网格显示全部幻灯片",
    "toolbar.present": "放映",
    "toolbar.presentTitle": "全屏放映（按 Esc 退出）",
    "toolbar.fit": "检查溢出",
    "toolbar.fitTitle": "逐页检测超出画布的内容",
    "nav.label": "幻灯片",
    "nav.dragHint": "拖动以调整顺序",
    "frame.title": "幻灯片",
    "badge.missing": "缺失",
    "badge.missingTitle": "{file} 不存在",
    "badge.overflow": "溢出 {amount}",
    "stage.position": "第 {n} 页，共 {total} 页",
    "stage.empty": "这份演示文稿还没有幻灯片。请让智能体先拟一份大纲，或在 manifest.json 中添加幻灯片。",
    "missing.eyebrow": "幻灯片缺失",
    "missing.body": "manifest.json 列出了这个文件，但它并不存在。",
    "manifest.missing": "manifest.json 不存在",
    "manifest.invalidJson": "manifest.json 不是有效的 JSON：{detail}",
    "manifest.notObject": "manifest.json 的内容必须是一个 JSON 对象",
    "manifest.noSlides": "manifest.json 中没有 \"slides\" 数组",
    "manifest.stale": "{error}。正在显示最后一次能读取的版本。",
    "present.label": "放映",
    "present.hint": "← → 翻页 · Esc 退出",
    "chip.slide": "第 {n} 页 · {title}",
    "chip.element": "第 {n} 页 · {element}",
    "reorder.refused": "无法调整顺序：{reason}。",
    "reorder.moved": "已将“{title}”移到第 {n} 位。",
    "save.failed": "无法保存 manifest.json：{message}",
    "fit.allFit": "已检查的 {count} 页全部在 {size} 画布之内。",
    "fit.someOverflow": "已检查的 {count} 页中有 {bad} 页超出 {size} 画布：{files}",
    "extra.heading": "未加入演示文稿",
    "extra.hint": "manifest.json 中没有列出的幻灯片文件",
    "extra.add": "加入演示文稿",
    "extra.addTitle": "将 {file} 追加到 manifest.json",
    "extra.added": "已将“{title}”加入演示文稿，作为第 {n} 页。",
    "extra.refused": "无法加入演示文稿：{reason}。",
    "problem.overflow": "内容超出幻灯片 {amount}：{where}",
    "pins.count": "这一页有 {count} 条标注",
    "edit.refused": "这段文字不能在这里直接修改：请在幻灯片文件中手动修改，或请智能体修改。",
    "edit.failed": "修改未能保存：{message}"
  }
};

/** `t(key, params, fallback)` over MESSAGES in the locale `getLocale()`
 * names now (the shell's `translator`, docs/viewer-contract.md). */
export function translator(getLocale) {
  return labelTranslator(MESSAGES, getLocale);
}
