"""The shared file's data survives the trip through HTML intact."""

from __future__ import annotations

from pathlib import Path

import pytest

from pneuma.core.errors import ToolError
from pneuma.share.model import (
    EMPTY_DATA_ELEMENT,
    ShareData,
    SharedMessage,
    SharedTurn,
    fill_template,
    read_share_file,
)


def test_a_filled_template_reads_back_the_same_files_and_messages(tmp_path: Path) -> None:
    data = ShareData(mode="slide", title="Deck", created_at=1)
    one = data.add_content(b"# one")
    two = data.add_content(b"</script><!-- two")
    again = data.add_content(b"# one")
    assert one == again and len(data.files) == 2
    data.turns = [SharedTurn("1", "first", 10, {"a.md": one}),
                  SharedTurn("2", "second", 20, {"a.md": two})]
    data.conversation = [SharedMessage("user", "hi </script> there", 5)]
    page = tmp_path / "s.html"
    html = fill_template(f"<html><body>{EMPTY_DATA_ELEMENT}</body></html>", data)
    assert html.count("</script>") == 1
    page.write_text(html, encoding="utf-8")
    back = read_share_file(page)
    assert back.files_at(1) == {"a.md": b"# one"}
    assert back.files_at() == {"a.md": b"</script><!-- two"}
    assert back.conversation[0].text == "hi </script> there"


def test_a_page_without_share_data_is_refused(tmp_path: Path) -> None:
    page = tmp_path / "x.html"
    page.write_text("<html></html>", encoding="utf-8")
    with pytest.raises(ToolError) as caught:
        read_share_file(page)
    assert caught.value.code == "E_PARSE_FAIL"
