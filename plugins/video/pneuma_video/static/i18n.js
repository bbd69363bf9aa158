// The video player's own words in English and Simplified Chinese (viewer
// contract, "Language"). What the player tells the agent (action results,
// <viewer-context>) stays English and is not here.
//
// MESSAGES is plain JSON inside JS: tests/test_viewer_i18n_catalogues.py
// reads it to check that both locales hold the same keys and placeholders
// and that every key the viewer uses exists.

import { translator as labelTranslator } from "/static/lib/viewer-helpers.js";

export const MESSAGES = {
  "en": {
    "error.missing": "There is no video.json in the workspace yet",
    "error.invalid": "video.json cannot be played",
    "scenes.label": "Scenes",
    "scene.missing": "{file} is missing",
    "scene.notText": "{file} is not a text file (a scene is HTML)",
    "controls.play": "Play (Space)",
    "controls.pause": "Pause (Space)",
    "controls.back": "Previous frame (←; Shift+← one second)",
    "controls.forward": "Next frame (→; Shift+→ one second)",
    "controls.loop": "Loop",
    "controls.timeline": "Timeline; click or drag to move the playhead",
    "controls.frame": "Frame {frame} / {total}",
    "edit.unmapped": "This text cannot be edited here: the scene's script writes it. Edit the scene file or ask the agent.",
    "edit.empty": "The text cannot be empty.",
    "edit.failed": "The text was not saved: {message}"
  },
  "zh-CN": {
    "error.missing": "工作区中还没有 video.json",
    "error.invalid": "video.json 无法播放",
    "scenes.label": "场景",
    "scene.missing": "缺少 {file}",
    "scene.notText": "{file} 不是文本文件（场景应为 HTML）",
    "controls.play": "播放（空格键）",
    "controls.pause": "暂停（空格键）",
    "controls.back": "上一帧（←；Shift+← 后退一秒）",
    "controls.forward": "下一帧（→；Shift+→ 前进一秒）",
    "controls.loop": "循环播放",
    "controls.timeline": "时间线；点击或拖动以移动播放头",
    "controls.frame": "第 {frame} 帧 / 共 {total} 帧",
    "edit.unmapped": "无法在此编辑这段文字：它由场景的脚本写出。请编辑场景文件或让智能体修改。",
    "edit.empty": "文字不能为空。",
    "edit.failed": "文字没有保存：{message}"
  }
};

/** `t(key, params, fallback)` over MESSAGES in the locale `getLocale()`
 * names now (the shell's `translator`, docs/viewer-contract.md). */
export function translator(getLocale) {
  return labelTranslator(MESSAGES, getLocale);
}
