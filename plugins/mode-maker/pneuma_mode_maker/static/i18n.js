// The mode-maker viewer's own words in English and Simplified Chinese
// (docs/viewer-contract.md, "Language"). What the viewer tells the agent
// (action results, <viewer-context>) stays English and is not here.
//
// MESSAGES is plain JSON inside JS: tests/test_viewer_i18n_catalogues.py
// reads it to check that both locales hold the same keys and placeholders.

import { translator as labelTranslator } from "/static/lib/viewer-helpers.js";

export const MESSAGES = {
  "en": {
    "toolbar.label": "The mode under construction",
    "button.check": "Check",
    "button.install": "Install",
    "button.installAnyway": "Install anyway",
    "button.package": "Package",
    "button.reload": "Reload Play",
    "play.title": "Play: {name} on its sample files",
    "play.frame": "The mode under construction, played on its seed files",
    "play.loading": "Loading the viewer…",
    "play.mounted": "Mounted",
    "play.noPackage": "No mode package here yet",
    "problems.title": "Problems in Play",
    "selection.title": "Selected in Play",
    "summary.title": "Manifest",
    "summary.name": "Name",
    "summary.package": "Package",
    "summary.actions": "Actions",
    "summary.tools": "Tools",
    "summary.locales": "Locales",
    "summary.none": "none",
    "summary.broken": "manifest.json cannot be read: {reason}",
    "files.title": "Files",
    "status.checking": "Checking… (a real Chromium mounts the viewer; this takes a few seconds)",
    "status.checkPassed": "Every check passed ({count})",
    "status.checkFailed": "{count} check(s) failed",
    "status.installing": "Installing in editable mode…",
    "status.installed": "Installed {name} {version}: pneuma run --mode {name} works now",
    "status.packaging": "Building a wheel…",
    "status.packaged": "Wheel written: {wheel}",
    "status.failed": "{what} failed: {reason}",
    "what.check": "The check",
    "what.install": "The install",
    "what.package": "Packaging",
    "seed.problem": "The package could not be made: {reason}"
  },
  "zh-CN": {
    "toolbar.label": "正在制作的模式",
    "button.check": "检查",
    "button.install": "安装",
    "button.installAnyway": "仍然安装",
    "button.package": "打包",
    "button.reload": "重新试玩",
    "play.title": "试玩：{name}（示例文件）",
    "play.frame": "正在制作的模式，在其种子文件上试玩",
    "play.loading": "正在加载查看器…",
    "play.mounted": "已挂载",
    "play.noPackage": "这里还没有模式包",
    "problems.title": "试玩中的问题",
    "selection.title": "试玩中的选择",
    "summary.title": "清单",
    "summary.name": "名称",
    "summary.package": "包",
    "summary.actions": "动作",
    "summary.tools": "工具",
    "summary.locales": "语言",
    "summary.none": "无",
    "summary.broken": "无法读取 manifest.json：{reason}",
    "files.title": "文件",
    "status.checking": "正在检查…（真实的 Chromium 会挂载查看器，需要几秒钟）",
    "status.checkPassed": "全部检查通过（{count} 项）",
    "status.checkFailed": "{count} 项检查未通过",
    "status.installing": "正在以可编辑方式安装…",
    "status.installed": "已安装 {name} {version}：现在可以运行 pneuma run --mode {name}",
    "status.packaging": "正在构建 wheel…",
    "status.packaged": "已写入 wheel：{wheel}",
    "status.failed": "{what}失败：{reason}",
    "what.check": "检查",
    "what.install": "安装",
    "what.package": "打包",
    "seed.problem": "无法生成模式包：{reason}"
  }
};

/** `t(key, params, fallback)` over MESSAGES in the locale `getLocale()`
 * names now (the shell's `translator`, docs/viewer-contract.md). */
export function translator(getLocale) {
  return labelTranslator(MESSAGES, getLocale);
}
