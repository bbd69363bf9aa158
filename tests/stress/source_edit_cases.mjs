// Run by test_source_edit_stress.py: reads JSON cases on stdin, applies
// /static/lib/source-edit.js to each, prints one JSON line of answers.
// {html: [{source, index, text}], markdown: [{source, start, end}]} ->
// {html: [{nodes: [{start, end, text}], edited}], markdown: [{start, end, text} | null]}
import { htmlTextNodes, replaceHtmlText, markdownInlineRange } from '../../pneuma/web/lib/source-edit.js';

let input = '';
process.stdin.setEncoding('utf8');
for await (const chunk of process.stdin) input += chunk;
const cases = JSON.parse(input);
const html = cases.html.map(({ source, index, text }) => {
  const nodes = htmlTextNodes(source).map(({ start, end, text: decoded }) => ({ start, end, text: decoded }));
  let edited = null;
  try {
    edited = replaceHtmlText(source, index, text);
  } catch (error) {
    edited = { error: String(error) };
  }
  return { nodes, edited };
});
const markdown = cases.markdown.map(({ source, start, end }) => markdownInlineRange(source, start, end));
process.stdout.write(JSON.stringify({ html, markdown }) + '\n');
