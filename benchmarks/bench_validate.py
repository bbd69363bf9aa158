"""validate_script throughput on the real WebGAL corpus, against the real parser.

The corpus is ../shared/reference/webgal/corpus (253 scenes of 5 games and the
parser's test inputs) plus the 95 hand-written probe lines in cases/. Measured in
this one run, on the same files:

1. **Python parse** — ``pneuma_webgal.script.parse_scene`` over every file
   (lines per second, best of ``--rounds``).
2. **Python validate** — ``validate_text`` (parse + every check against the
   game folder laid out from the project's manifest.json; folder indexes built
   once per game) — the work of ``validate_script`` minus the tool-runtime
   overhead, which is reported separately (3).
3. **validate_script tool calls** — ``call_tool(..., "validate_script",
   {"path": ...})`` per scene of the largest game, including sandbox, policy
   loading and the game-folder index on every call.
4. **Node webgal-parser 4.5.18, parse only** — the package loaded the way
   the reference driver ``parse.mjs`` loads it (engine command table, the
   engine's asset resolver), ``parser.parse()`` over every file in one Node
   process (best of ``--rounds``); and the driver itself, ``node parse.mjs
   --compact --sentences-only <all files>``, wall clock including Node
   start-up and JSON output.
5. **Agreement** — every sentence of our parser compared with the driver's
   live output (command, commandRaw, content, typed args, assets, sub-scenes,
   inline comment).

The oracle package is installed as the reference README says
(``npm install --prefix /tmp/wg ... webgal-parser@4.5.18``) when missing.

    python benchmarks/bench_validate.py [--rounds 5]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from _common import emit_results, machine_note, row  # noqa: E402

REPO = HERE.parent
REFERENCE = Path("/work/shared/reference/webgal")
CORPUS = REFERENCE / "corpus"
DRIVER = REFERENCE / "parse.mjs"
PARSER_PREFIX = Path("/tmp/wg")
PARSER_DIR = PARSER_PREFIX / "node_modules" / "webgal-parser"

sys.path.insert(0, str(REPO / "tests" / "webgal"))
sys.path.insert(0, str(REPO / "plugins" / "webgal"))

from corpus import build_game, projects  # noqa: E402

from pneuma_webgal.resources import build_index  # noqa: E402
from pneuma_webgal.script import parse_scene  # noqa: E402
from pneuma_webgal.validate import validate_text  # noqa: E402

# Our own timing loop for the Node side: loads webgal-parser exactly as parse.mjs does
# (engine table: package table minus if/chooseLabel plus __commment; engine asset setter).
NODE_TIMER = r"""
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
const dir = process.env.WEBGAL_PARSER_DIR;
const pkg = JSON.parse(fs.readFileSync(path.join(dir, 'package.json'), 'utf8'));
const mod = await import(pathToFileURL(path.join(dir, pkg.module || 'build/es/index.js')).href);
const CFG = mod.SCRIPT_CONFIG, ADD = mod.ADD_NEXT_ARG_LIST;
const TYPE = Object.fromEntries(CFG.map((c) => [c.scriptString, c.scriptType]));
const table = CFG.filter((c) => c.scriptString !== 'chooseLabel' && c.scriptString !== 'if')
  .map((c) => ({ scriptString: c.scriptString, scriptType: c.scriptType }));
table.push({ scriptString: '__commment', scriptType: 28 });
const addNext = ADD.filter((t) => t !== TYPE.if); addNext.push(28);
const DIR = { 0: 'background', 1: 'bgm', 2: 'figure', 3: 'scene', 5: 'vocal', 6: 'video' };
const setter = (n, t) => (String(n).match('http://') || String(n).match('https://')) ? n
  : (DIR[t] ? `./game/${DIR[t]}/${n}` : '');
const parser = new mod.default(() => {}, setter, addNext, table);
const files = JSON.parse(fs.readFileSync(0, 'utf8'));
const texts = files.map((f) => { let t = fs.readFileSync(f, 'utf8'); return t.charCodeAt(0) === 0xfeff ? t.slice(1) : t; });
const rounds = Number(process.env.ROUNDS || 5);
const log = console.log; console.log = () => {};
let best = Infinity, sentences = 0;
for (let r = 0; r < rounds + 1; r++) {         // first round warms the JIT up
  const t0 = process.hrtime.bigint();
  let n = 0;
  for (let i = 0; i < texts.length; i++) n += parser.parse(texts[i], 'b.txt', './game/scene/b.txt').sentenceList.length;
  const dt = Number(process.hrtime.bigint() - t0) / 1e9;
  if (r > 0 && dt < best) best = dt;
  sentences = n;
}
console.log = log;
console.log(JSON.stringify({ seconds: best, sentences }));
"""


def ensure_parser() -> None:
    if (PARSER_DIR / "package.json").is_file():
        return
    print("installing webgal-parser@4.5.18 under /tmp/wg (as the reference README says) ...", flush=True)
    subprocess.run(["npm", "install", "--prefix", str(PARSER_PREFIX), "--ignore-scripts", "--no-audit",
                    "--no-fund", "webgal-parser@4.5.18"], check=True, stdout=subprocess.DEVNULL)


def corpus_files() -> list[Path]:
    files = [REFERENCE / "cases" / "edge_cases.txt"]
    for project in projects():
        files += sorted((CORPUS / project / "scene").glob("*.txt"))
    return files


def best_of(rounds: int, fn) -> float:
    best = float("inf")
    for _ in range(rounds):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rounds", type=int, default=5)
    args = ap.parse_args()
    print(machine_note())
    ensure_parser()

    files = corpus_files()
    texts = [f.read_text(encoding="utf-8") for f in files]
    total_lines = sum(len(t.lstrip("\ufeff").replace("\r", "").split("\n")) for t in texts)
    print(f"corpus: {len(files)} files, {total_lines} lines (sentences)")

    # 1. Python parse
    t_parse = best_of(args.rounds, lambda: [parse_scene(t) for t in texts])

    # 2. Python validate (indexes built once per game)
    tmp = Path(tempfile.mkdtemp(prefix="bench-validate-"))
    jobs = []
    game_of: dict[str, Path] = {}
    for project in projects():
        ws = tmp / project
        game_of[project] = build_game(project, ws)
    indexes = {p: build_index(g) for p, g in game_of.items()}
    edge_index = build_index(tmp / "no-game" / "game")
    for f, text in zip(files, texts):
        project = f.parent.parent.name if f.parent.name == "scene" else None
        jobs.append((text, indexes.get(project, edge_index), f.name))
    t_validate = best_of(args.rounds, lambda: [validate_text(t, i, scene_name=n) for t, i, n in jobs])
    n_diag = sum(len(validate_text(t, i, scene_name=n)["diagnostics"]) for t, i, n in jobs)

    # 3. validate_script through the tool runtime, largest game, one call per scene
    from pneuma.tools.runtime import call_tool

    big = "the-great-mother"
    big_scenes = sorted((CORPUS / big / "scene").glob("*.txt"))
    big_lines = sum(len(p.read_text(encoding="utf-8").split("\n")) for p in big_scenes)
    ws_big = game_of[big].parent
    call_tool("webgal", ws_big, "validate_script", {"path": f"game/scene/{big_scenes[0].name}"})  # warm
    t0 = time.perf_counter()
    for p in big_scenes:
        r = call_tool("webgal", ws_big, "validate_script", {"path": f"game/scene/{p.name}"})
        assert "error" not in r, r
    t_tool = time.perf_counter() - t0

    # 4. Node: in-process parse loop, and the reference driver end to end
    timer = tmp / "timer.mjs"
    timer.write_text(NODE_TIMER)
    env = {"WEBGAL_PARSER_DIR": str(PARSER_DIR), "ROUNDS": str(args.rounds), "PATH": "/usr/bin:/bin:/usr/local/bin"}
    out = subprocess.run(["node", str(timer)], input=json.dumps([str(f) for f in files]), env=env,
                         capture_output=True, text=True, check=True)
    node = json.loads(out.stdout.strip().splitlines()[-1])
    assert node["sentences"] == total_lines, (node, total_lines)
    t_node = node["seconds"]

    t0 = time.perf_counter()
    driver = subprocess.run(["node", str(DRIVER), "--compact", "--sentences-only", *map(str, files)],
                            capture_output=True, text=True, check=True,
                            env={**env, "WEBGAL_PARSER_DIR": str(PARSER_DIR)})
    t_driver = time.perf_counter() - t0

    # 5. Agreement with the driver's live output
    oracle_lists = [json.loads(line) for line in driver.stdout.splitlines() if line.strip()]
    assert len(oracle_lists) == len(files)
    same = compared = 0
    first_diff = None
    for f, text, oracle in zip(files, texts, oracle_lists):
        ours = parse_scene(text, f.name).sentences
        for i, expected in enumerate(oracle):
            compared += 1
            got = ours[i].to_oracle() if i < len(ours) else None
            if got == expected:
                same += 1
            elif first_diff is None:
                first_diff = (f.name, i + 1)
        compared += max(0, len(ours) - len(oracle))
    agreement = 100.0 * same / compared

    py_parse = total_lines / t_parse
    py_validate = total_lines / t_validate
    node_parse = total_lines / t_node
    tool_rate = big_lines / t_tool
    print()
    print(f"python parse            {py_parse:>12,.0f} lines/s   ({t_parse * 1000:.1f} ms for the corpus)")
    print(f"python validate         {py_validate:>12,.0f} lines/s   ({t_validate * 1000:.1f} ms, {n_diag} diagnostics)")
    print(f"validate_script tool    {tool_rate:>12,.0f} lines/s   ({len(big_scenes)} calls on {big}, "
          f"{t_tool / len(big_scenes) * 1000:.1f} ms per call)")
    print(f"node webgal-parser      {node_parse:>12,.0f} lines/s   ({t_node * 1000:.1f} ms, parse only, warm JIT)")
    print(f"node parse.mjs driver   {total_lines / t_driver:>12,.0f} lines/s   ({t_driver * 1000:.0f} ms wall, "
          "start-up + JSON output)")
    print(f"agreement with the driver: {same}/{compared} sentences = {agreement:.2f} %"
          + (f" (first difference {first_diff[0]}:{first_diff[1]})" if first_diff else ""))
    print(machine_note())

    rows = [
        row("validate_script (parse + checks)", py_validate, None, "lines/s", "higher",
            baseline=node_parse, baseline_label="node webgal-parser parse only"),
        row("python parse only", py_parse, None, "lines/s", "higher",
            baseline=node_parse, baseline_label="node webgal-parser parse only"),
        row("validate_script tool call (per scene)", tool_rate, None, "lines/s", "higher",
            baseline=total_lines / t_driver, baseline_label="node parse.mjs driver, wall"),
        row("agreement with webgal-parser 4.5.18", agreement, 100.0, "%", "higher"),
    ]
    emit_results(rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
