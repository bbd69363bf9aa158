// The illustrate viewer's own words in English and Simplified Chinese (viewer
// contract, "Language"). What the viewer tells the agent (action results,
// <viewer-context>, the messages its buttons send) stays English and is not here.
//
// MESSAGES is plain JSON inside JS: tests/test_viewer_i18n_catalogues.py
// reads it to check that both locales hold the same keys and placeholders
// and that every key the viewer uses exists.

import { translator as labelTranslator } from "/static/lib/viewer-helpers.js";

export const MESSAGES = {
  "en": {
    "board.label": "Image board",
    "board.untitled": "Images",
    "row.unlisted": "Not on the board",
    "row.unlistedNote": "Images in images/ that no row of board.json lists",
    "empty.title": "No images yet",
    "empty.body": "Ask the agent for images: each round of variants appears here as a row.",
    "board.error": "board.json cannot be read: {message}",
    "choices.error": "choices.json cannot be read: {message}",
    "image.missing": "The image file is missing",
    "mark.pick": "Pick",
    "mark.pickTitle": "Pick this image",
    "mark.reject": "Reject",
    "mark.rejectTitle": "Reject this image: the agent keeps it out of the next round",
    "mark.star": "Star",
    "mark.starTitle": "Star this image",
    "mark.picked": "Picked",
    "mark.rejected": "Rejected",
    "mark.starred": "Starred",
    "mark.commentLabel": "Your comment",
    "mark.commentPlaceholder": "What you like, what should change",
    "mark.save": "Save comment",
    "mark.failed": "Your mark was not saved: {message}",
    "ask.vary": "Vary",
    "ask.varyTitle": "Ask the agent for variants of this image",
    "ask.regenerate": "Regenerate",
    "ask.regenerateTitle": "Ask the agent to make this image again from its prompt",
    "detail.close": "Close",
    "detail.prompt": "Prompt",
    "detail.revised": "Revised prompt",
    "detail.model": "Model",
    "detail.provider": "Provider",
    "detail.size": "Size",
    "detail.seed": "Seed",
    "detail.parents": "Made from",
    "detail.created": "Created",
    "detail.row": "Row",
    "detail.none": "none",
    "detail.noRecord": "This image has no record beside it ({path}).",
    "pending.note": "Marks your next message tells the agent of: {count}",
    "edit.hint": "Double-click to rename",
    "edit.title": "Title; Enter saves it into board.json, Esc cancels",
    "edit.failed": "The title was not saved: {message}",
    "edit.unreadable": "The title was not saved: board.json cannot be read.",
    "provider.title": "No image provider is configured",
    "provider.problemTitle": "The image provider cannot be used",
    "provider.body": "The agent cannot make new images until one of these is set (then restart Pneuma):"
  },
  "zh-CN": {
    "board.label": "图片看板",
    "board.untitled": "图片",
    "row.unlisted": "不在看板上",
    "row.unlistedNote": "images/ 中未被 board.json 任何一行列出的图片",
    "empty.title": "还没有图片",
    "empty.body": "请让智能体生成图片：每一轮变体都会在这里显示为一行。",
    "board.error": "无法读取 board.json：{message}",
    "choices.error": "无法读取 choices.json：{message}",
    "image.missing": "图片文件缺失",
    "mark.pick": "选用",
    "mark.pickTitle": "选用这张图片",
    "mark.reject": "淘汰",
    "mark.rejectTitle": "淘汰这张图片：智能体下一轮不会再用它",
    "mark.star": "加星",
    "mark.starTitle": "为这张图片加星",
    "mark.picked": "已选用",
    "mark.rejected": "已淘汰",
    "mark.starred": "已加星",
    "mark.commentLabel": "你的评论",
    "mark.commentPlaceholder": "喜欢什么，哪里要改",
    "mark.save": "保存评论",
    "mark.failed": "标记没有保存：{message}",
    "ask.vary": "变体",
    "ask.varyTitle": "请智能体生成这张图片的变体",
    "ask.regenerate": "重新生成",
    "ask.regenerateTitle": "请智能体按原提示词重新生成这张图片",
    "detail.close": "关闭",
    "detail.prompt": "提示词",
    "detail.revised": "修订后的提示词",
    "detail.model": "模型",
    "detail.provider": "服务方",
    "detail.size": "尺寸",
    "detail.seed": "种子",
    "detail.parents": "来源图片",
    "detail.created": "创建时间",
    "detail.row": "所在行",
    "detail.none": "无",
    "detail.noRecord": "这张图片旁边没有记录文件（{path}）。",
    "pending.note": "下一条消息会告诉智能体的标记：{count} 个",
    "edit.hint": "双击以重命名",
    "edit.title": "标题；按 Enter 写入 board.json，按 Esc 取消",
    "edit.failed": "标题没有保存：{message}",
    "edit.unreadable": "标题没有保存：无法读取 board.json。",
    "provider.title": "尚未配置图片生成服务",
    "provider.problemTitle": "图片生成服务无法使用",
    "provider.body": "设置以下任一项之前，智能体无法生成新图片（设置后请重新启动 Pneuma）："
  }
};

/** `t(key, params, fallback)` over MESSAGES in the locale `getLocale()`
 * names now (the shell's `translator`, docs/viewer-contract.md). */
export function translator(getLocale) {
  return labelTranslator(MESSAGES, getLocale);
}
