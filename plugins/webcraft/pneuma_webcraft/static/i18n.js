// The webcraft viewer's own words in English and Simplified Chinese (viewer
// contract, "Language"). What the viewer tells the agent (action results,
// <viewer-context>) stays English and is not here.
//
// MESSAGES is plain JSON inside JS: tests/test_viewer_i18n_catalogues.py
// reads it.

import { translator as labelTranslator } from "/static/lib/viewer-helpers.js";

export const MESSAGES = {
  "en": {
    "tabs.label": "Pages",
    "frame.title": "Site preview",
    "viewport.phone": "Phone",
    "viewport.tablet": "Tablet",
    "viewport.desktop": "Desktop",
    "viewport.all": "All three",
    "viewport.title": "Preview {width} px wide",
    "viewport.frameLabel": "{name} · {width} px",
    "viewport.allTitle": "Phone, tablet and desktop side by side",
    "pick.button": "Select",
    "pick.title": "Click an element in the page to point the agent at it",
    "reload.button": "Reload",
    "reload.title": "Reload the page, keeping its scroll position",
    "errors.button": "Errors: {count}",
    "errors.heading": "Console errors of the page",
    "errors.close": "Close",
    "errors.none": "The page reported no errors.",
    "empty.title": "No pages yet",
    "empty.body": "Ask the agent to build a page: every .html file in the workspace opens here as a tab.",
    "edit.refusedMarkup": "Only the text can change when you edit in place; the page's markup stayed as it was.",
    "edit.refusedScript": "This text is made by the page's own script, not written in its HTML file, so it cannot be edited here. Ask the agent to change the script.",
    "edit.conflict": "{page} changed while you edited it; your text was not written over it.",
    "edit.failed": "Your edit of {page} was not saved: {message}",
    "problems.console": "Console errors: {count} · {message}"
  },
  "zh-CN": {
    "tabs.label": "页面",
    "frame.title": "网站预览",
    "viewport.phone": "手机",
    "viewport.tablet": "平板",
    "viewport.desktop": "桌面",
    "viewport.all": "三种并排",
    "viewport.title": "以 {width} 像素宽度预览",
    "viewport.frameLabel": "{name} · {width} 像素",
    "viewport.allTitle": "手机、平板和桌面并排显示",
    "pick.button": "选取",
    "pick.title": "点击页面中的元素，把它指给智能体",
    "reload.button": "重新加载",
    "reload.title": "重新加载页面，保留滚动位置",
    "errors.button": "错误：{count}",
    "errors.heading": "页面的控制台错误",
    "errors.close": "关闭",
    "errors.none": "页面没有报告错误。",
    "empty.title": "还没有页面",
    "empty.body": "请让智能体创建一个页面：工作区中的每个 .html 文件都会在这里以标签页打开。",
    "edit.refusedMarkup": "就地编辑只能修改文字；页面的标记保持原样。",
    "edit.refusedScript": "这段文字由页面自己的脚本生成，并不写在它的 HTML 文件里，因此无法在这里编辑。请让智能体修改脚本。",
    "edit.conflict": "你编辑时 {page} 已被修改；你的文字没有覆盖它。",
    "edit.failed": "你对 {page} 的编辑未能保存：{message}",
    "problems.console": "控制台错误：{count} · {message}"
  }
};

/** `t(key, params, fallback)` over MESSAGES in the locale `getLocale()` names now. */
export function translator(getLocale) {
  return labelTranslator(MESSAGES, getLocale);
}
