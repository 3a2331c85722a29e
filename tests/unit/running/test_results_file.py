"""The JSONL results store: durable appends, torn-tail repair, no duplicates, safe resume; and
``read_records`` reading a Ray run's directory of Parquet parts as it reads a results file."""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from ragrecall import RecallResult, Sample, SampleError

# The results store's format (private): appends, repair and the lock, and the Ray parts' rows.
from ragrecall._running.engines.ray.parts import write_part  # the Ray workers' writer
from ragrecall._running.engines.ray.rows import result_rows
from ragrecall._running.store import ResultsFile  # the store under test: appends, repair, lock
from ragrecall.engines import Record, read_records


def record(i: int, score: float | None = 0.5, runs: list[float | None] | None = None) -> Record:
    sample = Sample(user_input=f"q{i}", reference=f"Fact {i}.", retrieved_contexts=[f"c{i}"])
    result = (
        RecallResult(score=score, status="scored", claims=[f"Fact {i}."], runs=runs or [])
        if score is not None
        else RecallResult(score=None, status="unscorable", reason="judge failed")
    )
    return Record(sample.key(), i, sample, {"context_recall": result})


def test_records_round_trip_and_keep_runs(tmp_path: Path) -> None:
    path = tmp_path / "out" / "r.jsonl"
    with ResultsFile.open(path) as out:
        out.append(record(0))
        out.append(record(1, None))
        out.append(record(0))  # a key already there is not written twice
    records = read_records(path)
    assert [r.index for r in records] == [0, 1]
    assert records[0].sample.key() == records[0].key
    assert records[0].score("context_recall") == 0.5
    assert records[1].score("context_recall") is None
    assert path.read_text().count("\n") == 2


def test_with_runs_the_sample_score_is_the_mean_of_the_scored_runs(tmp_path: Path) -> None:
    path = tmp_path / "r.jsonl"
    with ResultsFile.open(path, repeats=3) as out:
        out.append(record(0, 1.0, runs=[1.0, 0.5, None]))
    (loaded,) = read_records(path)
    assert loaded.results["context_recall"].runs == [1.0, 0.5, None]
    assert loaded.score("context_recall") == 1.0


def test_files_with_runs_beside_the_results_still_read(tmp_path: Path) -> None:
    """Files written before runs moved into each result keep their runs."""
    path = tmp_path / "r.jsonl"
    line = json.loads(record(0, 0.75).to_json())
    line["runs"] = {"context_recall": [1.0, 0.5, None]}
    path.write_text(json.dumps(line) + "\n")
    (loaded,) = read_records(path)
    assert loaded.results["context_recall"].runs == [1.0, 0.5, None]


def test_every_torn_tail_is_cut_back_to_the_last_complete_line(tmp_path: Path) -> None:
    path = tmp_path / "r.jsonl"
    with ResultsFile.open(path) as out:
        for i in range(3):
            out.append(record(i))
    full = path.read_bytes()
    first_two = full[: full.index(b"\n", full.index(b"\n") + 1) + 1]
    for cut in range(len(first_two), len(full)):  # a kill at any byte of the third write
        path.write_bytes(full[:cut])
        with ResultsFile.open(path) as out:
            assert out.repaired == (cut != len(first_two))
            assert sorted(out.done) == sorted(r.id for r in read_records(path))
            assert len(out.done) == 2
            out.append(record(2))
        assert path.read_bytes() == full


def test_a_corrupt_line_in_the_middle_is_an_error_not_silently_dropped(tmp_path: Path) -> None:
    path = tmp_path / "r.jsonl"
    path.write_text(record(0).to_json() + "\n{not json\n" + record(1).to_json() + "\n")
    with pytest.raises(SampleError, match=r"r.jsonl:2: not a ragrecall results line"):
        ResultsFile.open(path)


def test_resuming_with_other_metrics_or_repeats_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "r.jsonl"
    with ResultsFile.open(path) as out:
        out.append(record(0))
    with pytest.raises(SampleError, match="holds results for"):
        ResultsFile.open(path, metrics=["chunk_recall"])
    with pytest.raises(SampleError, match="--repeats 1, not 3"):
        ResultsFile.open(path, metrics=["context_recall"], repeats=3)
    ResultsFile.open(path, metrics=["context_recall"]).close()


def test_each_line_is_one_json_object_with_the_documented_fields(tmp_path: Path) -> None:
    path = tmp_path / "r.jsonl"
    with ResultsFile.open(path) as out:
        out.append(record(4, runs=[0.5, 0.5]))
    value = json.loads(path.read_text())
    assert set(value) == {"key", "occurrence", "content", "index", "sample", "results"}
    assert value["results"]["context_recall"]["score"] == 0.5
    assert value["results"]["context_recall"]["runs"] == [0.5, 0.5]


def test_a_second_writer_fails_fast_and_duplicate_lines_count_once(tmp_path: Path) -> None:
    path = tmp_path / "r.jsonl"
    with ResultsFile.open(path) as out:
        out.append(record(0))
        with pytest.raises(SampleError, match="being written by another process"):
            ResultsFile.open(path)
    with ResultsFile.open(path) as out:  # the lock went with the first writer
        assert list(out.done) == [(record(0).key, 1)]
    path.write_text(path.read_text() * 3)  # a file two writers filled before locks existed
    assert len(read_records(path)) == 1


def ray_part(out: Path, *records: Record) -> Path:
    """``records`` as one part of a Ray run's output, as its workers write them."""
    return write_part(out, [row for r in records for row in result_rows(r)])


def test_a_ray_directory_reads_as_the_same_records_as_a_results_file(tmp_path: Path) -> None:
    records = [record(0), record(1, None), record(2, 1.0, runs=[1.0, 1.0])]
    records = [dataclasses.replace(r, content=r.sample.content_key()) for r in records]
    path = tmp_path / "r.jsonl"
    path.write_text("".join(r.to_json() + "\n" for r in records))
    out = tmp_path / "ray"
    out.mkdir()
    ray_part(out, records[2])
    ray_part(out, records[0], records[1])
    assert read_records(out) == read_records(path) == records
    assert [r.score("context_recall") for r in read_records(out)] == [0.5, None, 1.0]


def test_in_a_ray_directory_a_sample_scored_again_is_the_newest_part(tmp_path: Path) -> None:
    out = tmp_path / "ray"
    out.mkdir()
    old = ray_part(out, record(0, 0.5))
    ray_part(out, record(0, 1.0), record(1))
    os.utime(old, ns=(1, 1))  # written long before
    assert [r.score("context_recall") for r in read_records(out)] == [1.0, 0.5]


def test_an_unreadable_part_is_left_out_and_other_directories_are_refused(
    tmp_path: Path,
) -> None:
    out = tmp_path / "ray"
    out.mkdir()
    with pytest.raises(SampleError, match="holds no results parts"):
        read_records(out)
    ray_part(out, record(0))
    torn = ray_part(out, record(1))
    torn.write_bytes(torn.read_bytes()[:100])  # a write cut short
    with pytest.warns(UserWarning, match="unreadable results part left out"):
        assert [r.index for r in read_records(out)] == [0]
    assert torn.exists()  # reading repairs nothing
    other = tmp_path / "other"
    other.mkdir()
    pq.write_table(pa.table({"a": [1]}), other / "x.parquet")
    with pytest.raises(SampleError, match="not a ragrecall results part: missing 'metric'"):
        read_records(other)


def test_reading_a_ray_directory_never_imports_ray(tmp_path: Path) -> None:
    out = tmp_path / "ray"
    out.mkdir()
    ray_part(out, record(0), record(1))
    code = (
        "import sys\nfrom ragrecall.engines import read_records\n"
        f"print(len(read_records({str(out)!r})), 'ray' in sys.modules)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.split() == ["2", "False"]
