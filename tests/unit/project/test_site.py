"""The documentation site as a reader gets it: ``mkdocs build --strict`` into a temporary
folder, then its HTML read back.

- The API reference shows typed signatures and a parameter table naming every parameter of
  ``evaluate``, ``ContextRecall`` and ``generate`` (the docstrings' ``Args:`` sections,
  rendered as tables by mkdocs.yml's mkdocstrings options).
- Every image a page shows exists (``mkdocs build --strict`` fails on a missing one too), and
  the figures drawn by ``python -m docs.figures.make`` are current: drawn again from the saved
  runs in docs/figures/data/ into a temporary folder, they are the same bytes.
"""

from __future__ import annotations

import inspect
import re
import subprocess
import sys
from html import unescape
from pathlib import Path

import pytest

import ragrecall

REPO = Path(__file__).resolve().parents[3]
DOCS = REPO / "docs"
FIGURES = DOCS / "figures"


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("site")
    mkdocs = Path(sys.executable).with_name("mkdocs")
    done = subprocess.run(
        [str(mkdocs), "build", "--strict", "--quiet", "--site-dir", str(out)],
        cwd=REPO,
        capture_output=True,
        text=True,
        env={"NO_MKDOCS_2_WARNING": "1", "PATH": str(mkdocs.parent)},
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return out


def section(page: str, name: str) -> str:
    """The HTML of top-level object ``name`` on a reference page, up to the next one."""
    start = page.index(f'id="ragrecall.{name}"')
    after = re.compile(r'id="ragrecall\.[A-Za-z_]+"').search(page, start + 1)
    return page[start : after.start() if after else len(page)]


def text(html: str) -> str:
    return unescape(re.sub(r"<[^>]+>", "", html))


@pytest.mark.parametrize("name", ["evaluate", "ContextRecall", "generate"])
def test_reference_has_types_and_a_parameter_table(site: Path, name: str) -> None:
    page = (site / "reference" / "ragrecall" / "index.html").read_text()
    html = section(page, name)
    obj = getattr(ragrecall, name)
    params = [p for p in inspect.signature(obj).parameters.values() if p.name != "self"]
    assert len(params) >= 10
    # the signature, on its own lines, with every parameter's type and the return type
    signature = text(html[html.index('class="doc-signature') : html.index("</pre>")])
    for p in params:
        assert re.search(rf"\b{p.name}: \S", signature), (name, p.name, signature)
    if inspect.isfunction(obj):
        assert re.search(r"\) -> \w+", signature), signature
    # the first table is the parameters': one row per parameter, in the signature's order
    table = html[html.index("<table>") : html.index("</table>")]
    headers = [text(h).strip() for h in re.findall(r"<th>.*?</th>", table)]
    assert headers == ["Name", "Type", "Description", "Default"]
    rows = re.findall(r'<tr class="doc-section-item">(.*?)</tr>', table, re.S)
    named = [text(re.findall(r"<td>(.*?)</td>", r, re.S)[0]).strip() for r in rows]
    assert named == [p.name for p in params]
    for row in rows:  # a type and a description in every row
        cells = [text(c).strip() for c in re.findall(r"<td>(.*?)</td>", row, re.S)]
        assert cells[1] and len(cells[2]) > 10, cells


def test_reference_pages_document_public_modules_only() -> None:
    for page in sorted((DOCS / "reference").glob("*.md")):
        for target in re.findall(r"^::: (\S+)", page.read_text(), re.M):
            assert not any(part.startswith("_") for part in target.split(".")), (page, target)


def images() -> list[tuple[Path, str]]:
    """Every local image a page shows: (the page, the image's path as written)."""
    return [
        (page, link)
        for page in sorted(DOCS.rglob("*.md"))
        for link in re.findall(r"!\[[^\]]*\]\(([^)\s]+)", page.read_text())
        if "://" not in link
    ]


def test_every_image_a_page_shows_exists(site: Path) -> None:
    shown = images()
    assert {Path(link).name for _, link in shown} >= {
        "claims.svg", "decision.svg", "reliability.svg", "ppi.svg",
    }  # fmt: skip
    for page, link in shown:
        source = (page.parent / link).resolve()
        assert source.is_file(), (page, link)
        assert (site / source.relative_to(DOCS)).is_file(), (page, link)  # on the site too


def test_figures_are_current(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "docs.figures.make", "--out", str(tmp_path)],
        cwd=REPO,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    drawn = sorted(p.name for p in tmp_path.glob("*.svg"))
    assert drawn == sorted(p.name for p in FIGURES.glob("*.svg"))
    for name in drawn:
        assert (tmp_path / name).read_bytes() == (FIGURES / name).read_bytes(), (
            f"docs/figures/{name} is stale: run python -m docs.figures.make"
        )
