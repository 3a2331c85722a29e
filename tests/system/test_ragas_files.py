"""Files written by RAGAS's own writers (``testkit/ragas_writer.py``, run in RAGAS's venv
``.venv-ragas``) load as the samples written, with no column left unread."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
from reading import dry_run_samples, texts

from ragrecall import load_samples

ROOT = Path(__file__).resolve().parents[2]
RAGAS_PYTHON = ROOT / ".venv-ragas" / "bin" / "python"


@pytest.fixture(scope="session")
def ragas_files(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The files RAGAS's writers write (testkit/ragas_writer.py, in RAGAS's venv)."""
    if not RAGAS_PYTHON.exists():
        pytest.fail(
            f"{RAGAS_PYTHON} is missing: RAGAS writes these files in its own venv; make it "
            "with: python3 -m venv .venv-ragas && .venv-ragas/bin/pip install -r "
            "testkit/requirements-ragas.txt (bash .ci/run does)"
        )
    out = tmp_path_factory.mktemp("ragas")
    env = {**os.environ, "HF_DATASETS_DISABLE_PROGRESS_BARS": "1", "PYTHONPATH": ""}
    subprocess.run(
        [str(RAGAS_PYTHON), str(ROOT / "testkit" / "ragas_writer.py"), str(out)],
        check=True,
        env=env,
        timeout=300,
    )
    return out


RAGAS_FILES = ["to_csv.csv", "to_jsonl.jsonl", "to_pandas.csv", "to_pandas.parquet"]


@pytest.mark.parametrize("name", [*RAGAS_FILES, "to_hf_dataset.jsonl"])
def test_a_file_ragas_wrote_loads_as_its_samples(ragas_files: Path, name: str) -> None:
    expected = load_samples(json.loads((ragas_files / "expected.json").read_text("utf-8")))
    assert load_samples(ragas_files / name) == expected


def test_ragas_samples_keep_their_names_and_lists(ragas_files: Path) -> None:
    first, empty, absent, again = load_samples(ragas_files / "to_csv.csv")
    assert first.retrieved_ids == ["d1", "d2", "d3"] and first.reference_ids == ["d1"]
    assert [c.id for c in first.retrieved_contexts] == ["d1", "d2", "d3"]
    assert texts([first])[0][2] == "Zwei\nZeilen ☃"
    assert (empty.retrieved_contexts, empty.retrieved_ids, empty.reference_contexts) == ([], [], [])
    assert (absent.retrieved_ids, absent.reference_contexts, absent.response) == (None,) * 3
    assert again.key() == first.key() and texts([again]) == [["Cats sleep all day."]]


def test_ragas_files_in_a_directory_read_with_no_column_left_unread(
    ragas_files: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    count, err = dry_run_samples(ragas_files, capsys)
    assert count == 6 * 4  # expected.json is one of the six files
    assert "columns not read" not in err
