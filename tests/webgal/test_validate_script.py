"""validate_script: the seed's test vectors, the engine's rules, and the real games.

The real games are laid out from corpus/<project>/manifest.json (every file of the game
folder exists; scenes, config.txt and animationTable.json have their real content), and
validate_script must find the mistakes listed at the end of the reference README, on
the right lines, without inventing others.
"""

from __future__ import annotations

import re

from corpus import scene_files

from pneuma.tools.runtime import call_tool


def validate(ws, **args):
    result = call_tool("webgal", ws, "validate_script", args)
    assert "error" not in result, result
    return result


def diags(result, kind=None):
    return [d for d in result["diagnostics"] if kind is None or d["kind"] == kind]


def lines(result, kind=None, pattern=""):
    return [d["line"] for d in diags(result, kind) if re.search(pattern, d["message"])]


def real(ws, scene):
    return validate(ws, path=f"game/scene/{scene}")


# --- the seed's test vectors (section 8) ---------------------------------------------


def test_missing_semicolon_is_syntax_and_keeps_valid(seeded):
    r = validate(seeded, content="changeBg:station_dusk.png -next;\n美绪:你好\n")
    assert r["valid"] is True
    (d,) = diags(r)
    assert d["line"] == 2 and d["kind"] == "syntax" and "分号" in d["message"] and d["fixHint"]


def test_unknown_command_is_syntax_with_the_nearest_command(seeded):
    r = validate(seeded, content="changBg:station_dusk.png;\nchangefigure:mio.png;\nsetBgAni:x 1s;\n")
    assert r["valid"] is False
    by_line = {d["line"]: d for d in diags(r, "syntax")}
    assert "changeBg:" in by_line[1]["fixHint"]
    assert "changeFigure:" in by_line[2]["fixHint"]
    assert "setAnimation" in by_line[3]["fixHint"]


def test_speaker_names_are_not_unknown_commands(seeded):
    text = "美绪:你好;\nWebGAL:hello;\nSayo:hi;\nEd:yo;\n{name}:变量说话人;\n:旁白;\nAlice Smith:hi;\n"
    r = validate(seeded, content=text)
    assert r == {"valid": True, "diagnostics": []}


def test_missing_resource_names_near_files(seeded):
    r = validate(seeded, content="changeBg:Station_Dusk.png -next;\nchangeFigure:mio.jpg;\nbgm:theme.mp3;\n")
    assert r["valid"] is False
    by_line = {d["line"]: d for d in diags(r, "resource")}
    assert "station_dusk.png" in by_line[1]["fixHint"] and "game/background/Station_Dusk.png" in by_line[1]["message"]
    assert "mio.png" in by_line[2]["fixHint"]
    assert "game/bgm/theme.mp3" in by_line[3]["message"]


# --- the engine's rules --------------------------------------------------------------


def test_keywords_with_spaces_case_or_fullwidth_colon(seeded):
    text = "changeBg :station_dusk.png;\n changeBg:station_dusk.png;\nChangeBg:station_dusk.png;\nchangeBg：station_dusk.png;\nend -next;\n"
    r = validate(seeded, content=text, language="en")
    assert lines(r, "syntax") == [1, 2, 3, 4, 5] and r["valid"] is False
    assert all(d["fixHint"] for d in r["diagnostics"])


def test_none_vars_urls_and_subfolders_are_not_missing(seeded):
    text = ("changeBg:none -next;\nchangeFigure:none -left -next;\nbgm:none;\nchangeBg:{bg} -next;\n"
            "changeBg:https://example.com/a.png;\nchangeFigure:mio.png?type=x -next;\nminiAvatar:none;\n")
    assert validate(seeded, content=text) == {"valid": True, "diagnostics": []}
    (seeded / "game" / "bgm" / "ch1").mkdir(parents=True)
    (seeded / "game" / "bgm" / "ch1" / "theme.mp3").write_bytes(b"")
    assert validate(seeded, content="bgm:ch1/theme.mp3;\n")["valid"] is True


def test_choose_targets_labels_and_scenes(seeded):
    text = ("choose:去:go|留下:stay|回家:river_zh.txt|坐车:nowhere.txt|空;\n"
            "label:go;\njumpLabel:Go;\njumpLabel:go;\nchangeScene:train_zh.txt;\ncallScene:missing.txt;\n")
    r = validate(seeded, content=text)
    res = diags(r, "resource")
    msgs = {(d["line"], d["message"]) for d in res}
    assert any(l == 1 and "stay" in m for l, m in msgs)
    assert any(l == 1 and "nowhere.txt" in m for l, m in msgs)
    assert any(l == 3 and "Go" in m for l, m in msgs)  # labels are case-sensitive
    assert any(l == 6 and "missing.txt" in m for l, m in msgs)
    assert not any(l in (4, 5) for l, _ in msgs)
    assert 1 in lines(r, "syntax")  # the option without a target
    assert "go" in next(d for d in res if d["line"] == 3)["fixHint"]


def test_animations_come_from_the_animation_table(seeded):
    text = ("setAnimation:shake -target=fig-left -next;\nsetAnimation:shak -target=fig-left;\n"
            "changeFigure:mio.png -enter=enter-from-left -exit=fade-out;\n")
    r = validate(seeded, content=text)
    assert lines(r, "resource") == [2, 3]
    assert "shake" in diags(r, "resource")[0]["fixHint"]


def test_line_numbers_are_one_based_and_language_switches(seeded):
    text = "\n\n; comment\nchangeBg:nope.png;\n"
    zh = validate(seeded, content=text)
    en = validate(seeded, content=text, language="en")
    assert [d["line"] for d in zh["diagnostics"]] == [4] == [d["line"] for d in en["diagnostics"]]
    assert "不存在" in zh["diagnostics"][0]["message"]
    assert "not found" in en["diagnostics"][0]["message"]
    assert re.search(r"[\u4e00-\u9fff]", zh["diagnostics"][0]["fixHint"])


def test_english_from_the_workspace_param(tmp_path):
    from pneuma.host.registry import get_mode
    from pneuma.workspace.params import init_workspace

    init_workspace(get_mode("webgal"), tmp_path, {"language": "en"})
    r = validate(tmp_path, content="changeBg:nope.png;")
    assert "not found" in r["diagnostics"][0]["message"]


def test_errors_of_validate_script(seeded):
    assert call_tool("webgal", seeded, "validate_script", {"path": "game/scene/nope.txt"})["error"]["code"] == "E_NOT_FOUND"
    assert call_tool("webgal", seeded, "validate_script", {})["error"]["code"] == "E_BAD_ARGS"
    assert call_tool("webgal", seeded, "validate_script", {"path": "../x.txt"})["error"]["code"] == "E_DENY_PATH"
    assert call_tool("webgal", seeded, "validate_script", {"content": "a\x00b"})["error"]["code"] == "E_PARSE_FAIL"


def test_seed_game_validates_clean(seeded):
    scenes = sorted(p.name for p in (seeded / "game" / "scene").glob("*.txt"))
    assert len(scenes) >= 5
    for name in scenes:
        assert real(seeded, name) == {"valid": True, "diagnostics": []}, name


# --- the real games (README "Real-world findings") -----------------------------------


def test_official_demo_has_no_resource_error_beyond_l2c(corpus_games):
    ws = corpus_games("webgal-demo")
    found = []
    for f in scene_files("webgal-demo"):
        r = real(ws, f.name)
        found += [(f.name, d["line"], d["message"]) for d in diags(r, "resource")]
    assert [(n, l) for n, l, _ in found] == [("demo_en.txt", 18), ("demo_ja.txt", 19)]
    assert all("l2c" in m for _, _, m in found)
    # function_test.txt:1 choose with spaces around '|' and demo_var.txt changeBg:{bg} are fine
    assert not diags(real(ws, "function_test.txt"), "resource")
    assert real(ws, "demo_var.txt")["valid"] is True


def test_natsukoi_wrong_case_background(corpus_games):
    r = real(corpus_games("natsukoi"), "Chapter1_o1.txt")
    (d,) = diags(r, "resource")
    assert d["line"] == 129 and "Aono_KTV.PNG" in d["message"] and "Aono_KTV.png" in d["fixHint"]
    assert r["valid"] is False


def test_natsu_city_rhythm_findings(corpus_games):
    ws = corpus_games("natsu-city-rhythm")
    en = real(ws, "main0_en.txt")
    assert 11 in lines(en, "resource", "Choose animation file")
    assert lines(en, "resource", "railway.png") == [17, 19]
    jp = real(ws, "main0_jp.txt")
    assert 162 in lines(jp, "resource", r"audio \(41\)\.wav")
    hint = next(d for d in diags(jp) if d["line"] == 162 and d["kind"] == "resource")["fixHint"]
    assert "audio (41).wav" in hint
    zh = real(ws, "main0_zh.txt")
    assert lines(zh, "resource", "railway.png") == [9, 10]
    # 567 of 1,032 statements lack ';' — reported, and alone they keep a scene valid
    missing = sum(len(lines(real(ws, f.name), "syntax", "分号")) for f in scene_files("natsu-city-rhythm"))
    assert missing == 567
    empty = real(ws, "badend.txt")
    assert empty["valid"] is True and [d["line"] for d in empty["diagnostics"]] == [1]


def test_the_great_mother_findings(corpus_games):
    ws = corpus_games("the-great-mother")
    legacy = 0
    missing_scene = []
    resource_other = []
    for f in scene_files("the-great-mother"):
        r = real(ws, f.name)
        legacy += len(lines(r, "syntax", "setBgAni|setFigAni|setBgFilter"))
        for d in diags(r, "resource"):
            (missing_scene if "神明A-3-1-2-1.txt" in d["message"] else resource_other).append((f.name, d["line"]))
    assert legacy == 446
    assert missing_scene == [("神明A-3-2-1-2.txt", 8)] or missing_scene == [("神明A-3-1-2.txt", 8)]
    assert resource_other == []  # bgm:bgmm/塔1.mp3 subfolders and -开场1.mp3 vocals resolve


def test_terre_template_placeholder_choice(corpus_games):
    r = real(corpus_games("terre-template"), "start.txt")
    assert lines(r, "resource", "选择场景文件") == [17, 17]


def test_parser_tests_without_game_folder_report_missing_refs(tmp_path):
    from corpus import CORPUS

    text = (CORPUS / "parser-tests" / "scene" / "long-script.txt").read_text(encoding="utf-8")
    r = validate(tmp_path, content=text)
    assert diags(r, "resource") and r["valid"] is False
