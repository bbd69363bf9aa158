"""The shell's Export menu, as a person uses it: open it, pick a format,
get the download."""

from __future__ import annotations

from typing import Any


def open_export_menu(page: Any) -> list[str]:
    """Open the shell's Export menu; the formats it lists."""
    page.click(".export-btn")
    page.wait_for_selector(".export-menu .menu-pop")
    # The mode's formats (the host's own entries, such as "Share as file", have no data-format).
    return page.eval_on_selector_all(".export-menu .menu-item[data-format]",
                                     "els => els.map(e => e.dataset.format)")


def download_export(page: Any, export_format: str, timeout: float = 120_000) -> Any:
    """Pick ``export_format`` in the open Export menu; the download it starts."""
    with page.expect_download(timeout=timeout) as info:
        page.click(f'.export-menu .menu-item[data-format="{export_format}"]')
    return info.value
