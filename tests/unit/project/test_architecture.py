"""ARCHITECTURE.md and docs/developing.md say what the tree is: the folder map names every
module of the core and nothing that is not there, the counts they state are the code's, and
every path they name exists."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import ragrecall

REPO = next(p for p in Path(__file__).resolve().parents if (p / "ARCHITECTURE.md").is_file())
SRC = Path(ragrecall.__file__).parent
ARCHITECTURE = (REPO / "ARCHITECTURE.md").read_text()
DEVELOPING = (REPO / "docs" / "developing.md").read_text()


def _folder_map() -> dict[Path, str]:
    """The map's blocks: each folder it heads (a line indented at most two spaces whose first
    word ends with '/') and the text under it, up to the next folder."""
    block = ARCHITECTURE.split("## Folders", 1)[1].split("```", 2)[1]
    blocks: dict[Path, str] = {}
    folder: Path | None = None
    for line in block.splitlines():
        word = line.split(maxsplit=1)[0] if line.strip() else ""
        if word.endswith("/") and len(line) - len(line.lstrip()) <= 2:
            if line.startswith(" "):
                folder = SRC / word  # a group of the core, under src/ragrecall/
            else:
                folder = SRC if word == "src/ragrecall/" else REPO / word
            assert folder not in blocks, f"{word} is mapped twice"
            blocks[folder] = ""
            line = line.removeprefix(line[: line.index(word) + len(word)])
        if folder is not None:
            blocks[folder] += line + "\n"
    return blocks


def _named(folder: Path, text: str) -> set[Path]:
    return {
        (SRC / name if "/" in name else folder / name) for name in re.findall(r"[\w/]+\.py\b", text)
    }


def test_the_map_names_every_module_of_the_core() -> None:
    blocks = _folder_map()
    packages = sorted(p.parent for p in SRC.rglob("__init__.py"))
    missing_folders = [str(p.relative_to(SRC)) for p in packages if p not in blocks]
    assert not missing_folders, f"folders the map does not name: {missing_folders}"
    missing = []
    for folder in packages:
        named = _named(folder, blocks[folder])
        missing += [
            str(p.relative_to(SRC))
            for p in sorted(folder.glob("*.py"))
            if p.name != "__init__.py" and p not in named
        ]
    assert not missing, f"modules the map does not name: {missing}"


def test_everything_the_map_names_exists() -> None:
    for folder, text in _folder_map().items():
        assert folder.exists(), f"the map names {folder}, which is not there"
        if folder.is_relative_to(SRC):
            absent = [str(p) for p in _named(folder, text) if not p.is_file()]
            assert not absent, f"the map names modules that are not there: {absent}"


def test_the_counts_are_the_codes() -> None:
    modules = len(list(SRC.rglob("*.py")))
    assert f"src/ragrecall/       ({modules} modules)" in ARCHITECTURE
    names = len(ragrecall.__all__)
    assert f"the public API ({names} names)" in ARCHITECTURE
    assert f"({names} names," in DEVELOPING


@pytest.mark.parametrize("page", ["ARCHITECTURE.md", "docs/developing.md"])
def test_every_path_a_page_names_exists(page: str) -> None:
    text = (REPO / page).read_text()
    paths = set(
        re.findall(r"`((?:src|tests|testkit|benchmarks|integrations|docs)/[\w./-]+)`", text)
    )
    absent = sorted(p for p in paths if not (REPO / p).exists())
    assert not absent, f"{page} names paths that are not there: {absent}"
