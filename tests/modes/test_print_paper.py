"""print.json as the print mode reads it (pneuma_print/paper.py, the one
reader the export, the check, the describer and the tools share): paper
sizes in mm and pt, landscape, margins, page numbers, and one clear line
for each way the file can be wrong."""

from __future__ import annotations

import pytest
from pneuma_print.paper import PrintFileError, parse_document


def test_defaults_are_a4_portrait_18_mm_numbers_from_1_but_not_on_the_cover() -> None:
    doc = parse_document('{"pages": ["pages/a.html", {"file": "./pages/b.html", "title": "B"}]}')
    assert (doc.paper, doc.orientation, doc.width_mm, doc.height_mm) == ("A4", "portrait", 210, 297)
    assert (round(doc.width_pt), round(doc.height_pt)) == (595, 842)
    assert (doc.content_width_mm, doc.content_height_mm) == (174, 261)
    assert [(p.file, p.title) for p in doc.pages] == [("pages/a.html", "a"), ("pages/b.html", "B")]
    assert [doc.number_of(i) for i in (1, 2, 3)] == [None, 2, 3]


def test_letter_landscape_custom_paper_margins_and_numbering() -> None:
    doc = parse_document('{"paper": "letter", "orientation": "landscape", "pages": [],'
                         ' "margin_mm": {"top": 10, "bottom": 30},'
                         ' "pageNumbers": {"start": 5, "skipFirst": false}}')
    assert (round(doc.width_pt), round(doc.height_pt), doc.paper_label) == (792, 612, "Letter landscape")
    assert (doc.margins.top, doc.margins.right, doc.margins.bottom) == (10, 18, 30)
    assert doc.number_of(1) == 5
    custom = parse_document('{"paper": {"width_mm": 100, "height_mm": 150}, "pages": []}')
    assert (custom.paper_label, round(custom.width_pt), round(custom.height_pt)) == ("100 × 150 mm", 283, 425)
    assert parse_document('{"pageNumbers": false, "pages": []}').number_of(2) is None


@pytest.mark.parametrize(("text", "message"), [
    ('{"paper": "A3", "pages": []}', 'unknown "paper" "A3"; use one of A4, Letter, Legal, A5, B5'),
    ('{"paper": {"width_mm": 5, "height_mm": 100}, "pages": []}', '"paper" width_mm 5 is outside 20–2000 mm'),
    ('{"orientation": "sideways", "pages": []}', '"orientation" must be "portrait" or "landscape"'),
    ('{"margin_mm": 120, "pages": []}', '"margin_mm" leaves no room on a 210 × 297 mm page'),
    ('{"pages": [{"file": "../outside.html"}]}', "page 1's file \"../outside.html\" is not a path inside"),
    ('{"pages": ["a.html", "./a.html"]}', "a.html is listed twice (pages 2 and 1)"),
    ('{"pages": "a.html"}', '"pages" must be a list'),
    ('[1, 2]', "must hold a JSON object"),
])
def test_each_mistake_is_one_clear_line(text: str, message: str) -> None:
    with pytest.raises(PrintFileError) as caught:
        parse_document(text)
    assert message in str(caught.value)
    assert str(caught.value).startswith("print.json")
