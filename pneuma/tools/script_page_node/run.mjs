// pneuma/tools/script_page.py's run_script in Node.js, when Node is there:
// the exporter's module runs with the job, no browser started. Arguments:
// the folders (JSON: URL path prefix -> folder), the module's URL path and
// the function's name; the job comes on standard input, the answer goes to
// standard output as {answer} or {fatal}.
import { register } from 'node:module';

const [folders, modulePath, functionName] = process.argv.slice(2);
// The viewer's modules import "/static/lib/…": hooks.mjs maps each prefix
// to its folder, and loads every .js as an ES module, as a browser does.
register('./hooks.mjs', import.meta.url, { data: JSON.parse(folders) });

let text = '';
process.stdin.setEncoding('utf8');
for await (const chunk of process.stdin) text += chunk;
let got;
try {
  const module = await import(modulePath);
  got = { answer: await module[functionName](JSON.parse(text)) };
} catch (e) {
  got = { fatal: String((e && e.message) || e) };
}
process.stdout.write(JSON.stringify(got));
