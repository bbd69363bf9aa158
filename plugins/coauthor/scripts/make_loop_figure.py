"""Draw the seed paper's figure, figures/coauthor-loop.pdf, with the standard
library only.

The figure shows CoAuthor's loop: task -> plan -> patch -> review -> apply,
with the two ways back (a rejected patch returns to planning; drift at apply
time sends the patch back to be rebased) and the blocking question that
stops planning when a fact is missing.

It is a one-page vector PDF using the base-14 Helvetica fonts, which
pdflatex includes with \\includegraphics. Run it from anywhere:

    python plugins/coauthor/scripts/make_loop_figure.py
"""

from __future__ import annotations

from pathlib import Path

OUT = Path(__file__).resolve().parents[1] / "pneuma_coauthor" / "seeds" / "figures" / "coauthor-loop.pdf"

WIDTH, HEIGHT = 476, 150

# Glyph widths (1/1000 em) of the characters used, from the Helvetica AFMs.
_REGULAR = dict(zip(
    " +-,.:/()abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ",
    [278, 584, 333, 278, 278, 278, 278, 333, 333,
     556, 556, 500, 556, 556, 278, 556, 556, 222, 222, 500, 222, 833, 556, 556,
     556, 556, 333, 500, 278, 556, 500, 722, 500, 500, 500,
     667, 667, 722, 722, 667, 611, 778, 722, 278, 500, 667, 556, 833, 722, 778,
     667, 778, 722, 667, 611, 722, 667, 944, 667, 667, 611],
))
_BOLD = dict(zip(
    " abcdefghijklmnopqrstuvwxyzAPRT",
    [278, 556, 611, 556, 611, 556, 333, 611, 611, 278, 278, 556, 278, 889, 611, 611,
     611, 611, 389, 556, 333, 611, 556, 778, 556, 556, 500, 722, 667, 722, 611],
))


def text_width(text: str, size: float, bold: bool = False) -> float:
    table = _BOLD if bold else _REGULAR
    return sum(table.get(ch, 556) for ch in text) * size / 1000


def _escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")


class Canvas:
    def __init__(self) -> None:
        self.ops: list[str] = []

    def text(self, x: float, y: float, text: str, size: float, bold: bool = False,
             align: str = "left", gray: float = 0.1) -> None:
        if align == "center":
            x -= text_width(text, size, bold) / 2
        font = "F2" if bold else "F1"
        self.ops.append(
            f"{gray:.2f} g BT /{font} {size:g} Tf {x:.2f} {y:.2f} Td ({_escape(text)}) Tj ET"
        )

    def box(self, x: float, y: float, w: float, h: float, fill: tuple[float, float, float],
            stroke: tuple[float, float, float]) -> None:
        self.ops.append(
            "{:.3f} {:.3f} {:.3f} rg {:.3f} {:.3f} {:.3f} RG 1 w "
            "{:.2f} {:.2f} {:.2f} {:.2f} re B".format(*fill, *stroke, x, y, w, h)
        )

    def polyline(self, points: list[tuple[float, float]], dashed: bool = False,
                 gray: float = 0.25) -> None:
        path = " ".join(
            f"{x:.2f} {y:.2f} {'m' if i == 0 else 'l'}" for i, (x, y) in enumerate(points)
        )
        dash = "[3 2] 0 d" if dashed else "[] 0 d"
        self.ops.append(f"{gray:.2f} G 0.9 w {dash} {path} S [] 0 d")

    def arrowhead(self, x: float, y: float, direction: str, gray: float = 0.25) -> None:
        """A filled triangle whose tip is at (x, y)."""
        s = 4.5
        if direction == "right":
            pts = [(x, y), (x - s * 1.4, y + s * 0.75), (x - s * 1.4, y - s * 0.75)]
        elif direction == "up":
            pts = [(x, y), (x - s * 0.75, y - s * 1.4), (x + s * 0.75, y - s * 1.4)]
        else:
            raise ValueError(direction)
        path = " ".join(f"{px:.2f} {py:.2f} {'m' if i == 0 else 'l'}" for i, (px, py) in enumerate(pts))
        self.ops.append(f"{gray:.2f} g {path} h f")

    def content(self) -> bytes:
        return ("\n".join(self.ops) + "\n").encode("latin-1")


def draw() -> bytes:
    c = Canvas()
    box_w, box_h, gap, left = 80, 42, 14, 10
    y0 = 68
    steps = [
        ("Task", "claimed by the agent"),
        ("Plan", "goal, scope, risks"),
        ("Patch", "diff + baseRevision"),
        ("Review", "the person decides"),
        ("Apply", "revision re-checked"),
    ]
    agent_fill, agent_stroke = (0.93, 0.95, 0.99), (0.25, 0.35, 0.60)
    person_fill, person_stroke = (0.99, 0.94, 0.87), (0.70, 0.42, 0.10)
    centers = []
    for i, (title, subtitle) in enumerate(steps):
        x = left + i * (box_w + gap)
        human = title == "Review"
        c.box(x, y0, box_w, box_h, person_fill if human else agent_fill,
              person_stroke if human else agent_stroke)
        cx = x + box_w / 2
        centers.append(cx)
        c.text(cx, y0 + 23, title, 11, bold=True, align="center")
        c.text(cx, y0 + 10, subtitle, 7, align="center", gray=0.3)
        if i:
            start = x - gap + 1
            c.polyline([(start, y0 + box_h / 2), (x - 1, y0 + box_h / 2)])
            c.arrowhead(x - 0.5, y0 + box_h / 2, "right")

    plan, patch, review, apply = centers[1], centers[2], centers[3], centers[4]

    # Review -> Plan: rejected or follow-up.
    y_reject = 46
    c.polyline([(review, y0 - 1), (review, y_reject), (plan, y_reject), (plan, y0 - 6)])
    c.arrowhead(plan, y0 - 0.5, "up")
    c.text(plan + 6, y_reject + 4, "rejected: plan again", 7.5, gray=0.25)

    # Apply -> Patch: drift detected, rebase.
    y_drift = 16
    c.polyline([(apply, y0 - 1), (apply, y_drift), (patch + 10, y_drift), (patch + 10, y0 - 6)])
    c.arrowhead(patch + 10, y0 - 0.5, "up")
    c.text(patch + 16, y_drift + 4, "file changed: rebase, never overwrite", 7.5, gray=0.25)

    # Plan -> person: blocking question (dashed, upwards).
    y_top = y0 + box_h
    c.polyline([(plan, y_top + 1), (plan, y_top + 22)], dashed=True)
    c.arrowhead(plan, y_top + 27, "up")
    c.text(plan + 6, y_top + 30, "missing fact: status blocked, ask the person", 7.5, gray=0.25)

    # Legend.
    lx, ly = WIDTH - 96, y_top + 28
    c.box(lx, ly, 8, 8, agent_fill, agent_stroke)
    c.text(lx + 12, ly + 1.5, "agent", 7.5, gray=0.25)
    c.box(lx + 44, ly, 8, 8, person_fill, person_stroke)
    c.text(lx + 56, ly + 1.5, "person", 7.5, gray=0.25)
    return c.content()


def build_pdf(content: bytes) -> bytes:
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        (
            f"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 {WIDTH} {HEIGHT}] "
            "/Resources << /Font << /F1 5 0 R /F2 6 0 R >> >> /Contents 4 0 R >>"
        ).encode(),
        b"<< /Length " + str(len(content)).encode() + b" >>\nstream\n" + content + b"endstream",
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>",
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica-Bold /Encoding /WinAnsiEncoding >>",
        b"<< /Title (CoAuthor loop) /Producer (pneuma-coauthor make_loop_figure.py) >>",
    ]
    out = bytearray(b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += f"{number} 0 obj\n".encode() + body + b"\nendobj\n"
    xref = len(out)
    out += f"xref\n0 {len(objects) + 1}\n".encode()
    out += b"0000000000 65535 f \n"
    for offset in offsets:
        out += f"{offset:010d} 00000 n \n".encode()
    out += (
        f"trailer\n<< /Size {len(objects) + 1} /Root 1 0 R /Info {len(objects)} 0 R >>\n"
        f"startxref\n{xref}\n%%EOF\n"
    ).encode()
    return bytes(out)


def main() -> None:
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_bytes(build_pdf(draw()))
    print(f"wrote {OUT} ({OUT.stat().st_size} bytes)")


if __name__ == "__main__":
    main()
