"""One list of metrics: the top level's table is written from it, the example metric scores as
a metric must, and adding a metric is its folder and one line, as ARCHITECTURE.md says.

The last test follows ARCHITECTURE.md's steps on a copy of the package: the example folder,
its line in ``METRICS``, the table written, then the metric in ``ragrecall eval --metric``, at
the top level, in a LangChain runnable and as a LlamaIndex evaluator.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from langchain_core.messages import BaseMessage

import ragrecall

# The metric list (private): the registry's module and the example metric, a template in no list.
from ragrecall._metrics import registry
from ragrecall._metrics.example import AnswerMatch
from ragrecall.engines import metric_classes
from ragrecall.testing import ScriptedJudge

PACKAGE = Path(ragrecall.__file__).parent
REPO = PACKAGE.parents[1]
LINE = '    ("example", "AnswerMatch"),\n'


def match_reply(messages: Sequence[BaseMessage]) -> dict[str, Any]:
    """A judge for AnswerMatch: stated when the reference's words are all in the response."""
    human = str(messages[-1].content)
    reference = human.split("Reference answer: ", 1)[1].split("\n\n", 1)[0]
    response = human.split("\n\nResponse: ", 1)[1].split("\n\n", 1)[0]
    words = set(re.findall(r"\w+", response.lower()))
    stated = set(re.findall(r"\w+", reference.lower())) <= words
    return {"stated": stated, "reason": "same facts" if stated else "the reference is missing"}


def test_the_top_level_table_is_written_from_the_list() -> None:
    assert registry.top_level_table() in (PACKAGE / "__init__.py").read_text()
    names = [cls.__name__ for cls in metric_classes()]
    assert [module for module, _ in registry.METRICS] == [
        cls.__module__.removeprefix("ragrecall._metrics.") for cls in metric_classes()
    ]
    assert set(names) <= set(ragrecall.__all__)
    assert [getattr(ragrecall, name) for name in names] == list(metric_classes())
    assert registry.metric_names()[: len(names)] == tuple(cls.name for cls in metric_classes())


def test_the_example_metric_scores_sync_and_async_and_fails_as_a_value() -> None:
    metric = AnswerMatch(ScriptedJudge(reply=match_reply))
    said = {"user_input": "Capital?", "reference": "Paris", "response": "It is Paris."}
    missed = {**said, "response": "It is Lyon."}
    result = metric.score(said)
    assert (result.metric, result.score, result.status, result.reason) == (
        "answer_match",
        1.0,
        "scored",
        "same facts",
    )
    assert result.usage.calls == 1
    assert asyncio.run(metric.ascore(missed)).score == 0.0
    assert metric.score(missed).reason == "the reference is missing"
    empty = metric.score({"reference": "Paris"})
    assert (empty.score, empty.status) == (None, "unscorable")
    assert empty.reason == "needs a reference and a response to compare"
    down = AnswerMatch(ScriptedJudge(reply=lambda m: RuntimeError("down")), max_retries=0)
    assert down.score(said).reason == "judge failed: RuntimeError: down"
    babble = AnswerMatch(ScriptedJudge(reply=lambda m: "no JSON here")).score(said)
    assert babble.status == "unscorable" and "invalid reply after a re-ask" in babble.reason


def architecture_steps() -> str:
    text = (REPO / "ARCHITECTURE.md").read_text()
    return text.split("## Adding a metric\n", 1)[1].split("\n## ", 1)[0]


def test_the_steps_name_files_that_exist() -> None:
    """Paths from the repository's root, and test files by name (wherever their tier is)."""
    steps = architecture_steps()
    paths = set(re.findall(r"`((?:src|integrations|docs)/[\w./-]+|mkdocs.yml)`", steps))
    assert {"src/ragrecall/_metrics/registry.py", "src/ragrecall/_metrics/example/"} <= paths
    assert [path for path in sorted(paths) if not (REPO / path).exists()] == []
    tests = set(re.findall(r"`(test_\w+\.py)`", steps))
    assert {"test_metric_list.py", "test_exported_members.py", "test_read_back.py"} <= tests
    assert [name for name in sorted(tests) if not any(REPO.glob(f"tests/**/{name}"))] == []
    assert "`python -m ragrecall._metrics.registry`" in steps
    assert LINE.strip() == '("example", "AnswerMatch"),'
    assert '`("my_metric", "MyMetric"),`' in steps


CHECK = """
import json, sys
import ragrecall
from ragrecall.cli import main
from ragrecall.testing import ScriptedJudge
from langchain_ragrecall import as_runnable
from llama_index.evaluation.ragrecall import AnswerMatchEvaluator
from judges import reply

data, out = sys.argv[1:]
code = main(["eval", data, "--metric", "answer_match", "--judge-factory", "judges:judge",
             "--out", out])
sample = {"user_input": "Capital?", "reference": "Paris", "response": "It is Paris."}
runnable = as_runnable(ragrecall.AnswerMatch(ScriptedJudge(reply=reply)))
evaluator = AnswerMatchEvaluator(ScriptedJudge(reply=reply))
found = evaluator.evaluate(query="Capital?", response="Lyon.", reference="Paris")
print(json.dumps({
    "eval": code,
    "top": "AnswerMatch" in ragrecall.__all__ and ragrecall.AnswerMatch.name,
    "langchain": runnable.invoke(sample).score,
    "llama_index": [found.score, found.passing, found.feedback],
}))
"""


def test_one_folder_and_one_line_add_a_metric_everywhere(tmp_path: Path) -> None:
    """The steps of ARCHITECTURE.md on a copy of the package (the example folder is in it)."""
    src = tmp_path / "src"
    shutil.copytree(PACKAGE, src / "ragrecall", ignore=shutil.ignore_patterns("__pycache__"))
    assert (src / "ragrecall" / "_metrics" / "example" / "metric.py").exists()
    path = src / "ragrecall" / "_metrics" / "registry.py"
    last = '    ("retrieval_recall", "RetrievalRecall"),\n'
    path.write_text(path.read_text().replace(last, last + LINE))  # the one line
    (tmp_path / "judges.py").write_text(
        "from ragrecall.testing import ScriptedJudge\n"
        "from test_metric_list import match_reply as reply\n\n\n"
        "def judge() -> ScriptedJudge:\n    return ScriptedJudge(reply=reply)\n"
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(src), str(tmp_path), _here()])}
    subprocess.run([sys.executable, "-m", "ragrecall._metrics.registry"], env=env, check=True)
    assert '"AnswerMatch": "._metrics.example",' in (src / "ragrecall" / "__init__.py").read_text()
    data = tmp_path / "data.jsonl"
    rows = [
        {"question": "Capital?", "ground_truth": "Paris", "answer": "Paris, of course."},
        {"question": "River?", "ground_truth": "The Seine", "answer": "The Loire."},
    ]
    data.write_text("".join(json.dumps(row) + "\n" for row in rows))
    out = tmp_path / "results.jsonl"
    run = subprocess.run(
        [sys.executable, "-c", CHECK, str(data), str(out)],
        env=env,
        capture_output=True,
        text=True,
        cwd=tmp_path,
    )
    assert run.returncode == 0, run.stderr
    seen = json.loads(run.stdout.strip().splitlines()[-1])
    assert seen["top"] == "answer_match"
    assert seen["langchain"] == 1.0
    assert seen["llama_index"] == [0.0, False, "Score 0.00.\nNote: the reference is missing."]
    scores = [_score(json.loads(line)) for line in out.read_text().splitlines()]
    assert sorted(scores) == [0.0, 1.0]
    assert seen["eval"] == 0  # the mean, 0.5, meets the default minimum score


def _here() -> str:
    return str(Path(__file__).parent)


def _score(record: dict[str, Any]) -> float:
    return float(record["results"]["answer_match"]["score"])
