// The webgal viewer's own words, in the shell's two languages
// (docs/viewer-contract.md, "Language"). What the viewer says to the agent
// (action results, the <viewer-context>) stays English and is not here; the
// diagnostics' messages come from validate_script in the project's language.
//
// MESSAGES is plain JSON between the braces: tests/test_viewer_i18n_catalogues.py
// reads it to check that both locales hold the same keys and {placeholders}.

import { translator as labelTranslator } from "/static/lib/viewer-helpers.js";

export const MESSAGES = {
  "en": {
    "scenes.label": "Scenes",
    "scenes.title": "Scenes",
    "scenes.game": "Game",
    "scenes.none": "No scenes yet in game/scene/.",
    "scenes.playing": "The game is here",
    "badge.problems": "{count} diagnostics",
    "badge.problem": "1 diagnostic",
    "badge.valid": "valid",
    "game.frame": "WebGAL preview",
    "game.starting": "Starting the engine…",
    "game.restarting": "Restarting the engine…",
    "game.missing": "The WebGAL engine is not available (run scripts/build-web).",
    "game.clickToStart": "Click the game to start it.",
    "game.at": "{scene} · line {line}",
    "game.restart": "Restart",
    "game.restartTitle": "Start the game over (title screen)",
    "game.play": "Play scene",
    "game.playTitle": "Play the open scene from its first line",
    "script.none": "No file open",
    "script.gone": "{file} does not exist (any more).",
    "script.pick": "Pick a scene on the left.",
    "script.hint": "Click a line to play it · shift-click to select lines",
    "script.lines": "Script lines",
    "check.running": "checking…",
    "check.unavailable": "diagnostics unavailable",
    "check.notServed": "the validate_script tool is not served",
    "check.valid": "✓ valid",
    "check.invalid": "✕ invalid · {count} diagnostics",
    "check.invalidOne": "✕ invalid · 1 diagnostic",
    "check.warnings": "⚠ valid · {count} diagnostics",
    "check.warningsOne": "⚠ valid · 1 diagnostic",
    "kind.syntax": "syntax",
    "kind.resource": "resource",
    "kind.style": "style",
    "chip.line": "line {line}",
    "chip.lines": "lines {start}–{end}",
    "pin.title": "Review pin {number}"
  },
  "zh-CN": {
    "scenes.label": "场景",
    "scenes.title": "场景",
    "scenes.game": "游戏",
    "scenes.none": "game/scene/ 中还没有场景。",
    "scenes.playing": "游戏正在这里",
    "badge.problems": "{count} 条诊断",
    "badge.problem": "1 条诊断",
    "badge.valid": "无问题",
    "game.frame": "WebGAL 预览",
    "game.starting": "正在启动引擎…",
    "game.restarting": "正在重启引擎…",
    "game.missing": "WebGAL 引擎不可用（请运行 scripts/build-web）。",
    "game.clickToStart": "点击游戏画面开始。",
    "game.at": "{scene} · 第 {line} 行",
    "game.restart": "重新开始",
    "game.restartTitle": "从头开始游戏（标题画面）",
    "game.play": "播放场景",
    "game.playTitle": "从第一行播放当前打开的场景",
    "script.none": "未打开文件",
    "script.gone": "{file} 不存在（或已被删除）。",
    "script.pick": "请在左侧选择一个场景。",
    "script.hint": "点击某行即可播放 · 按住 Shift 点击可选择多行",
    "script.lines": "脚本行",
    "check.running": "检查中…",
    "check.unavailable": "无法获取诊断",
    "check.notServed": "服务器未提供 validate_script 工具",
    "check.valid": "✓ 无问题",
    "check.invalid": "✕ 有错误 · {count} 条诊断",
    "check.invalidOne": "✕ 有错误 · 1 条诊断",
    "check.warnings": "⚠ 可运行 · {count} 条诊断",
    "check.warningsOne": "⚠ 可运行 · 1 条诊断",
    "kind.syntax": "语法",
    "kind.resource": "资源",
    "kind.style": "风格",
    "chip.line": "第 {line} 行",
    "chip.lines": "第 {start}–{end} 行",
    "pin.title": "审阅标记 {number}"
  }
};

/** `t(key, params, fallback)` over MESSAGES in the locale `getLocale()`
 * names now (the shell's `translator`, docs/viewer-contract.md). */
export function translator(getLocale) {
  return labelTranslator(MESSAGES, getLocale);
}
