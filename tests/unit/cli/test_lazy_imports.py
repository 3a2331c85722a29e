"""Import what is used: the library's main class and ``evaluate`` load no provider SDK, and the
command line answers ``--version``, ``--help``, a command's ``--help`` and a usage error without
langchain (issue 41, item 7; issue 43, part 3). Each check runs in a fresh interpreter and
reads ``sys.modules``."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

PROVIDERS = ("openai", "langchain_openai")
HEAVY = (*PROVIDERS, "langchain_core", "pydantic", "ragrecall._metrics.prompts")
# The commands but demo (it runs with no argument). generate's own help names the question
# kinds and their default weights, which live with its prompts: it alone imports them.
COMMANDS = ("eval", "claims", "generate", "compare", "review", "calibrate", "watch", "judge")


def loaded_after(code: str, names: tuple[str, ...]) -> list[str]:
    """Which of ``names`` are in ``sys.modules`` once ``code`` has run in a fresh process."""
    found = f"[n for n in {names!r} if n in sys.modules]"
    probe = f"{code}\nimport json, sys\nprint(json.dumps({found}))"
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    loaded: list[str] = json.loads(done.stdout.splitlines()[-1])
    return loaded


def test_context_recall_imports_no_provider_sdk() -> None:
    assert loaded_after("from ragrecall import ContextRecall", PROVIDERS) == []


def test_evaluate_imports_no_provider_sdk() -> None:
    """The batch engine (which loads the OpenAI client) is imported when it is asked for."""
    assert loaded_after("from ragrecall import evaluate", PROVIDERS) == []


def test_the_embedded_judges_model_is_found_without_the_openai_sdk() -> None:
    assert loaded_after("from ragrecall.judges import resolve_model", PROVIDERS) == []


def test_a_remote_judge_loads_its_sdk_when_resolved() -> None:
    code = "from ragrecall.judges import resolve_judge\nresolve_judge('openai:gpt-4o-mini')"
    code = f"import os\nos.environ['OPENAI_API_KEY'] = 'sk-test'\n{code}"
    assert loaded_after(code, PROVIDERS) == list(PROVIDERS)


@pytest.mark.parametrize(
    ("argv", "code"),
    [
        (["--version"], 0),
        (["--help"], 0),
        ([], 2),
        (["eval", "--help"], 0),
        (["eval"], 2),
        (["eval", "data.jsonl", "--max-calls", "-5"], 2),
        (["eval", "data.jsonl", "--timeout", "nan"], 2),
        (["eval", "data.jsonl", "--no-such-flag"], 2),
        *((["--help", name], 0) for name in COMMANDS),  # the listing, the command built
        *(([name, "--help"], 0) for name in COMMANDS if name != "generate"),
        *(([name], 2) for name in COMMANDS),
    ],
)
def test_the_command_answers_without_langchain(argv: list[str], code: int) -> None:
    run = f"""
import sys
from ragrecall.cli import main
try:
    main({argv!r})
except SystemExit as stop:
    assert stop.code == {code}, stop.code
"""
    assert loaded_after(run, HEAVY) == []
