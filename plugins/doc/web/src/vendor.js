// The doc viewer's third-party code, bundled by `npm run build` into
// pneuma_doc/static/vendor/doc-vendor.js (an ES module the viewer imports).
// Only the languages the skill promises are registered, to keep it small.
// Markdown itself is the shell's one markdown-it (/static/lib/markdown-it.js).
import hljs from "highlight.js/lib/core";
import bash from "highlight.js/lib/languages/bash";
import c from "highlight.js/lib/languages/c";
import cpp from "highlight.js/lib/languages/cpp";
import csharp from "highlight.js/lib/languages/csharp";
import css from "highlight.js/lib/languages/css";
import diff from "highlight.js/lib/languages/diff";
import dockerfile from "highlight.js/lib/languages/dockerfile";
import go from "highlight.js/lib/languages/go";
import ini from "highlight.js/lib/languages/ini";
import java from "highlight.js/lib/languages/java";
import javascript from "highlight.js/lib/languages/javascript";
import json from "highlight.js/lib/languages/json";
import kotlin from "highlight.js/lib/languages/kotlin";
import markdown from "highlight.js/lib/languages/markdown";
import php from "highlight.js/lib/languages/php";
import plaintext from "highlight.js/lib/languages/plaintext";
import python from "highlight.js/lib/languages/python";
import ruby from "highlight.js/lib/languages/ruby";
import rust from "highlight.js/lib/languages/rust";
import shell from "highlight.js/lib/languages/shell";
import sql from "highlight.js/lib/languages/sql";
import swift from "highlight.js/lib/languages/swift";
import typescript from "highlight.js/lib/languages/typescript";
import xml from "highlight.js/lib/languages/xml";
import yaml from "highlight.js/lib/languages/yaml";

const languages = {
  bash, c, cpp, csharp, css, diff, dockerfile, go, ini, java, javascript, json,
  kotlin, markdown, php, plaintext, python, ruby, rust, shell, sql, swift,
  typescript, xml, yaml,
};
for (const [name, definition] of Object.entries(languages)) {
  hljs.registerLanguage(name, definition);
}
// Names people write after ``` that highlight.js knows under another name.
hljs.registerAliases(["jsx"], { languageName: "javascript" });
hljs.registerAliases(["tsx"], { languageName: "typescript" });
hljs.registerAliases(["toml"], { languageName: "ini" });
hljs.registerAliases(["console", "shellsession"], { languageName: "shell" });
hljs.registerAliases(["text", "txt"], { languageName: "plaintext" });

export { hljs };
