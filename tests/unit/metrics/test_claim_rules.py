"""The claim rules before and around the judge: ``split_structure`` (lists, lead-ins,
headings, tables and code become units before any model), and claims that stand alone (the
detection rule, the compound split, the verbatim check on rewrites, and the decontext call in
ContextRecall's decomposition, with scripted judges)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from fakes import ScriptedJudge, keyword_reply
from hypothesis import given, settings
from hypothesis import strategies as st

from ragrecall import ClaimCache, ContextRecall

# Unit tests of the claim rules (private): many cases a public call cannot reach one by one.
from ragrecall._metrics.claims.compound import split_compound
from ragrecall._metrics.claims.decontext import needs_context, referring_span, resolved
from ragrecall._metrics.claims.rewrite import accept_rewrite, fits
from ragrecall._metrics.claims.structure import Unit, split_structure
from ragrecall.cli import main


def texts(reference: str) -> list[str]:
    return [unit.text for unit in split_structure(reference)]


def test_aks_steps_fold_the_lead_in_into_each_step() -> None:
    reference = (
        "To deploy to AKS:\n"
        "1. Build the Docker image.\n"
        "2. Push the image to Azure Container Registry (ACR).\n"
        "3. Create the AKS cluster with `az aks create`.\n"
        "4. Get the cluster credentials with `az aks get-credentials`.\n"
        "5. Write the deployment YAML.\n"
        "6. Apply it with `kubectl apply -f deployment.yaml`."
    )
    assert split_structure(reference) == [
        Unit("To deploy to AKS, build the Docker image.", True),
        Unit("To deploy to AKS, push the image to Azure Container Registry (ACR).", True),
        Unit("To deploy to AKS, create the AKS cluster with `az aks create`.", True),
        Unit("To deploy to AKS, get the cluster credentials with `az aks get-credentials`.", True),
        Unit("To deploy to AKS, write the deployment YAML.", True),
        Unit("To deploy to AKS, apply it with `kubectl apply -f deployment.yaml`.", True),
    ]


@pytest.mark.parametrize(
    "reference",
    [
        "1. Build the image.\n2. Push the image.",
        "1) Build the image.\n2) Push the image.",
        "Step 1: Build the image.\nStep 2: Push the image.",
        "Step 1. Build the image\nStep 2. Push the image",
        "- Build the image.\n- Push the image.",
        "* Build the image\n* Push the image",
        "• Build the image.\n• Push the image.",
        "\u2013 Build the image.\n\u2013 Push the image.",  # en dash
    ],
)
def test_markers_are_stripped_and_items_end_with_a_stop(reference: str) -> None:
    assert split_structure(reference) == [
        Unit("Build the image.", True),
        Unit("Push the image.", True),
    ]


def test_a_list_starting_at_three_after_a_lead_in() -> None:
    reference = "To finish the rollout:\n3. Apply the manifest.\n4. Check the pods."
    assert texts(reference) == [
        "To finish the rollout, apply the manifest.",
        "To finish the rollout, check the pods.",
    ]
    assert texts("3. Apply the manifest.\n4. Check the pods.") == [
        "Apply the manifest.",
        "Check the pods.",
    ]


def test_step_markers_after_a_lead_in() -> None:
    reference = "Before you start:\nStep 1: Install Docker.\nStep 2: Sign in to ACR."
    assert texts(reference) == [
        "Before you start, install Docker.",
        "Before you start, sign in to ACR.",
    ]


def test_sentence_lead_ins_join_with_a_space() -> None:
    reference = "The plan includes:\n- Unlimited storage\n- 24/7 support"
    assert texts(reference) == [
        "The plan includes unlimited storage.",
        "The plan includes 24/7 support.",
    ]


def test_label_lead_ins_keep_their_colon() -> None:
    assert texts("Requirements:\n- Python 3.10\n- pip") == [
        "Requirements: Python 3.10.",
        "Requirements: pip.",
    ]


def test_acronyms_and_names_keep_their_capitals() -> None:
    reference = "If the build fails:\n- Check the logs\n- ACR login expired\n- GitHub is down"
    assert texts(reference) == [
        "If the build fails, check the logs.",
        "If the build fails, ACR login expired.",
        "If the build fails, GitHub is down.",
    ]
    assert texts("You need:\n- `uv` 0.4\n- Python 3.10") == [
        "You need `uv` 0.4.",
        "You need python 3.10.",
    ]


def test_nested_bullets_take_their_parent_as_lead_in_and_the_parent_is_a_unit() -> None:
    reference = "- Install the dependencies\n  - numpy\n  - pandas\n- Run the tests"
    assert split_structure(reference) == [
        Unit("Install the dependencies.", True),
        Unit("Install the dependencies: numpy.", True),
        Unit("Install the dependencies: pandas.", True),
        Unit("Run the tests.", True),
    ]


def test_nested_bullets_under_an_especially_item() -> None:
    reference = (
        "Before surgery, patients should:\n• stop eating\n• list medicines, especially:\n"
        "  • blood thinners"
    )
    assert texts(reference) == [
        "Before surgery, patients should stop eating.",
        "Before surgery, patients should list medicines, especially blood thinners.",
    ]


def test_nested_bullets_under_a_lead_in_item() -> None:
    reference = "To deploy:\n- If the cluster is new:\n  - create a namespace"
    assert texts(reference) == ["To deploy, if the cluster is new, create a namespace."]


def test_a_heading_is_context_for_list_fragments_only() -> None:
    assert texts("### Python 3.12 highlights\n- A per-interpreter GIL\n- PEP 695 syntax") == [
        "Python 3.12 highlights: A per-interpreter GIL.",
        "Python 3.12 highlights: PEP 695 syntax.",
    ]
    assert texts("### Features\n* The SDK retries requests.\n* The SDK signs requests.") == [
        "The SDK retries requests.",
        "The SDK signs requests.",
    ]


def test_a_compound_item_is_split_and_each_piece_keeps_its_lead_in_and_label() -> None:
    reference = (
        "To open an account:\n1. Fund the account; the 2024 limit is $7,000.\n2. Wait; see below."
    )
    assert texts(reference) == [
        "To open an account, fund the account.",
        "To open an account, the 2024 limit is $7,000.",
        "To open an account, wait; see below.",  # a piece under three words splits nothing
    ]
    reference = "### Backends\n* `sqlite`: the default; stores data in a single file"
    assert texts(reference) == [
        "Backends: `sqlite`: the default.",
        "Backends: `sqlite`: stores data in a single file.",
    ]
    reference = "- Resolution: the certificate was renewed and its auto-renewal was enabled"
    assert texts(reference) == [
        "Resolution: the certificate was renewed.",
        "Resolution: its auto-renewal was enabled.",
    ]


def test_a_nested_parent_that_states_a_fact_is_a_unit_and_a_stating_lead_in_too() -> None:
    reference = (
        "The migration plan has three phases:\n- Phase 1: Inventory\n  - List all VMs.\n"
        "- Phase 2: Pilot\n  - Move five services.\n- Phase 3: Cutover"
    )
    assert split_structure(reference) == [
        Unit("The migration plan has three phases.", False),  # the judge splits it as prose
        Unit("The migration plan has three phases: Phase 1: Inventory.", True),
        Unit("The migration plan has three phases: Phase 1: Inventory: List all VMs.", True),
        Unit("The migration plan has three phases: Phase 2: Pilot.", True),
        Unit("The migration plan has three phases: Phase 2: Pilot: Move five services.", True),
        Unit("The migration plan has three phases: Phase 3: Cutover.", True),
    ]
    # a label or a linking lead-in is no statement of its own
    assert texts("Our plans:\n- Free\n- Pro") == ["Our plans: Free.", "Our plans: Pro."]
    assert texts("The Pro plan includes:\n- SSO\n- audit logs") == [
        "The Pro plan includes SSO.",
        "The Pro plan includes audit logs.",
    ]


def test_a_heading_before_a_lead_in_is_dropped() -> None:
    reference = "## Deployment\n\nTo deploy to AKS:\n1. Build the image.\n2. Push it."
    assert texts(reference) == ["To deploy to AKS, build the image.", "To deploy to AKS, push it."]


def test_headings_alone_are_not_units() -> None:
    assert split_structure("## Heading") == []
    assert split_structure("Setup\n=====\n\nThe app runs on Linux.") == [
        Unit("The app runs on Linux.", False)
    ]


TABLE = "| Tier | Price |\n|---|---|\n| Basic | $5 |\n| Pro | |"


def test_each_table_cell_is_one_statement_named_by_its_row() -> None:
    assert split_structure(TABLE) == [Unit("Tier Basic: Price $5.", True), Unit("Tier Pro.", True)]


def test_a_table_lead_in_that_states_something_is_its_own_unit() -> None:
    assert split_structure(f"We offer two tiers with different prices:\n\n{TABLE}") == [
        Unit("We offer two tiers with different prices.", False),
        Unit("Tier Basic: Price $5.", True),
        Unit("Tier Pro.", True),
    ]


@pytest.mark.parametrize("lead", ["Support tiers:\n", "## Support tiers\n"])
def test_a_table_label_or_heading_is_context_for_each_row(lead: str) -> None:
    assert texts(lead + TABLE) == [
        "Support tiers: Tier Basic: Price $5.",
        "Support tiers: Tier Pro.",
    ]


def test_a_connective_table_lead_in_is_dropped() -> None:
    assert texts(f"The tiers are as follows:\n\n{TABLE}") == ["Tier Basic: Price $5.", "Tier Pro."]


def test_inline_code_keeps_its_backticks() -> None:
    reference = "Run `pip install ragrecall==0.1.0` to install it."
    assert split_structure(reference) == [Unit(reference, False)]
    assert texts("- Use `kubectl apply -f app.yaml`") == ["Use `kubectl apply -f app.yaml`."]
    assert texts('- Set the flag to "true."') == ['Set the flag to "true."']


def test_a_single_line_fence_joins_its_sentence() -> None:
    reference = "Install it with:\n```bash\npip install ragrecall\n```\nIt adds a CLI."
    assert split_structure(reference) == [
        Unit("Install it with `pip install ragrecall`.", True),
        Unit("It adds a CLI.", False),
    ]


def test_a_multi_line_fence_is_kept_verbatim() -> None:
    reference = "Create the file:\n\n```python\nimport os\nprint(os.getcwd())\n```"
    assert split_structure(reference) == [
        Unit("Create the file:\n```python\nimport os\nprint(os.getcwd())\n```", True)
    ]


def test_a_fence_in_a_list_item_is_not_split() -> None:
    reference = "- Build it with:\n  ```\n  docker build . -t app:1.0\n  ```\n- Push it."
    assert texts(reference) == ["Build it with `docker build . -t app:1.0`.", "Push it."]


def test_only_the_last_sentence_introduces_the_code() -> None:
    reference = (
        "It needs Python 3.11 or newer. Set it up:\n```bash\npython3 -m venv .venv\npip i .\n```"
    )
    assert split_structure(reference) == [
        Unit("It needs Python 3.11 or newer.", False),
        Unit("Set it up:\n```bash\npython3 -m venv .venv\npip i .\n```", True),
    ]


def test_a_leading_fence_takes_the_sentence_that_explains_it() -> None:
    reference = (
        "```bash\nset -euo pipefail\ntrap 'echo failed' ERR\n```\nThese lines stop on errors."
    )
    assert split_structure(reference) == [
        Unit(
            "```bash\nset -euo pipefail\ntrap 'echo failed' ERR\n```\nThese lines stop on errors.",
            True,
        )
    ]


def test_a_block_of_configuration_without_a_fence_is_kept_whole_as_a_fenced_one() -> None:
    config = "[server]\nport = 8080\nworkers=4\n\n"
    yaml = "Deploy it with:\nreplicas: 3\nimage: registry.example/app:1.4\n  pullPolicy: Always"
    assert split_structure(f"{config}{yaml}\n\nThree replicas run behind the balancer.") == [
        Unit("[server]\nport = 8080\nworkers=4", True),
        Unit(yaml, True),  # with the line that leads into it, as before a fence
        Unit("Three replicas run behind the balancer.", False),
    ]


@pytest.mark.parametrize(
    "code",
    [
        "def total(rows):\n    # empty rows count as zero\n    return sum(rows)",
        "CREATE TABLE users (\n  id BIGINT PRIMARY KEY,\n  email TEXT NOT NULL\n);",
        '<form action="/login">\n  <input name="user">\n</form>',
        "\\begin{equation}\n  E = mc^2\n\\end{equation}",
        'FROM debian:12\nRUN apt-get update\nCMD ["run"]',
    ],
)
def test_code_markup_and_tex_without_a_fence_are_one_unit(code: str) -> None:
    assert split_structure(code) == [Unit(code, True)]


@pytest.mark.parametrize(
    "prose",
    [
        "Pros: it is cheap.\nCons: it is slow.",  # labels, not settings
        "Set the limit first.\nlimit = 5",  # one line of code in prose
        "The ratio is computed as\nx = a / b\nand then rounded.",
        "Our office moved (see\nthe notice) in May.",
        "apiVersion: v1",  # a single line
    ],
)
def test_prose_with_a_line_of_code_or_labels_stays_prose(prose: str) -> None:
    assert split_structure(prose) == [Unit(prose, False)]


def test_prose_is_one_unit_whatever_its_abbreviations() -> None:
    reference = "Dr. Smith measured 3.5 kg on Jan. 3. He was pleased."
    assert split_structure(reference) == [Unit(reference, False)]


def test_pronoun_prose_stays_one_unit() -> None:
    reference = "Kubernetes was released in 2014. It was designed by Google."
    assert split_structure(reference) == [Unit(reference, False)]


def test_paragraphs_are_units_and_text_is_not_rewritten() -> None:
    reference = "  First line.\nSecond line.\n\nSecond paragraph with **bold**.  "
    assert split_structure(reference) == [
        Unit("First line.\nSecond line.", False),
        Unit("Second paragraph with **bold**.", False),
    ]


def test_a_year_opening_prose_is_not_a_list() -> None:
    assert split_structure("1945. The war ended.") == [Unit("1945. The war ended.", False)]


@pytest.mark.parametrize("reference", ["", "   \n\n  ", "# Title\n\n---"])
def test_nothing_to_say_gives_no_units(reference: str) -> None:
    assert split_structure(reference) == []


@pytest.mark.parametrize(
    "lead",
    ["as follows:", "The steps are:", "Follow these steps:", "Here are the steps:", "Steps:"],
)
def test_connective_lead_ins_are_dropped(lead: str) -> None:
    assert texts(f"{lead}\n1. Build the image.\n2. Push it.") == ["Build the image.", "Push it."]


def test_connective_tails_and_here_is_how_are_trimmed() -> None:
    expected = ["To deploy to AKS, build the image.", "To deploy to AKS, push it."]
    assert texts("To deploy to AKS, follow these steps:\n1. Build the image.\n2. Push it.") == (
        expected
    )
    assert texts(
        "To deploy to AKS, the steps are as follows:\n1. Build the image.\n2. Push it."
    ) == (expected)
    assert texts("How to deploy to AKS:\n1. Build the image.\n2. Push it.") == expected
    assert texts("Here's how to deploy to AKS:\n- Build the image.\n- Push it.") == expected


def test_a_sentence_before_a_lead_in_stays_prose() -> None:
    reference = "Changing a tire takes 15 min. Follow these steps:\n1. Park.\n2. Jack it up."
    assert split_structure(reference) == [
        Unit("Changing a tire takes 15 min.", False),
        Unit("Park.", True),
        Unit("Jack it up.", True),
    ]


def test_prose_after_a_list_is_not_glued_to_the_last_item() -> None:
    reference = "To stain:\n1. Add iodine.\n2. Rinse with alcohol.\nCells appear purple."
    assert split_structure(reference) == [
        Unit("To stain, add iodine.", True),
        Unit("To stain, rinse with alcohol.", True),
        Unit("Cells appear purple.", False),
    ]
    assert texts("- A long item that\nwraps here.\n- Next") == [
        "A long item that wraps here.",
        "Next.",
    ]


def test_prose_before_a_lead_in_line_is_kept() -> None:
    reference = "AKS is a managed service.\nTo deploy to it:\n1. Build the image."
    assert split_structure(reference) == [
        Unit("AKS is a managed service.", False),
        Unit("To deploy to it, build the image.", True),
    ]


def test_units_are_frozen() -> None:
    unit = Unit("x", False)
    with pytest.raises(AttributeError):
        unit.text = "y"  # type: ignore[misc]


PIECES = [
    "To deploy:",
    "\n",
    "\n\n",
    "1. ",
    "3) ",
    "- ",
    "  - ",
    "• ",
    "Step 2: ",
    "## H",
    ":",
    "`x`",
]
PIECES += ["| a | b |\n|---|---|\n| 1 | 2 |", "```\ncode\n```", "```py\na\nb\n```", "as follows:"]
PIECES += ["Dr. Smith", "3.5", "word", "It is.", "> q", "1945. ", "Here's how", "**b**", ",", ";"]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(PIECES), max_size=10).map("".join))
def test_any_mix_gives_stripped_non_empty_units(reference: str) -> None:
    for unit in split_structure(reference):
        assert unit.text and unit.text == unit.text.strip()


# --- claims that stand alone: decontext, compound splits, rewrites ------------------------


CURIES = (
    "Marie and Pierre Curie discovered polonium and radium in 1898. They named the first "
    "after Marie's homeland, Poland."
)
NOKIA = "Nokia was founded in 1865. The company later moved into rubber."
REFERENCE = f"{CURIES} {NOKIA}"


@pytest.mark.parametrize(
    "claim",
    [
        "They named the first after Poland.",
        "The company later moved into rubber and cables.",
        "This mission reached comet 67P in 2014.",
        "Neither of them ever married.",
        "The former treats pods as interchangeable.",
        "Both are often used as caches.",
        "These waterways are a UNESCO World Heritage Site.",
        "It was first released in 2015.",
        "By 1998 it was the largest maker of phones.",
        "Their last album was Abbey Road.",
    ],
)
def test_claims_that_refer_outside_themselves_are_found(claim: str) -> None:
    assert needs_context(claim)


@pytest.mark.parametrize(
    "claim",
    [
        "The Golden Gate Bridge opened to vehicles on May 28, 1937.",
        "Marie Curie said she would return.",
        "Nokia entered mobile phones in the 1980s.",
        "Redis can persist data to disk.",
        "Adults with influenza can be treated with oseltamivir.",
    ],
)
def test_claims_that_stand_alone_are_left_alone(claim: str) -> None:
    assert not needs_context(claim)


def test_compound_claims_split_where_two_clauses_join() -> None:
    assert split_compound("Metformin rarely causes hypoglycaemia; sulfonylureas can cause it.") == [
        "Metformin rarely causes hypoglycaemia.",
        "Sulfonylureas can cause it.",
    ]
    assert split_compound("The city has 165 canals, and they were dug in 1600.") == [
        "The city has 165 canals.",
        "They were dug in 1600.",
    ]
    assert split_compound("Deployments treat pods alike, while StatefulSets name each pod.") == [
        "Deployments treat pods alike.",
        "StatefulSets name each pod.",
    ]
    assert split_compound("The key was rotated and its old value was revoked.") == [
        "The key was rotated.",
        "Its old value was revoked.",
    ]
    # a list, or a clause too short to be a fact, stays whole
    assert split_compound("It supports A, B, and C.") == ["It supports A, B, and C."]
    assert split_compound("Use it; see below.") == ["Use it; see below."]
    assert split_compound("The parent company and its subsidiary were fined.") == [
        "The parent company and its subsidiary were fined."
    ]
    assert split_compound("Salt and pepper, and oil, are needed.") == [
        "Salt and pepper, and oil, are needed."
    ]


def test_two_instructions_joined_by_and_are_split() -> None:
    assert split_compound("Remove the lug nuts and swap in the spare.") == [
        "Remove the lug nuts.",
        "Swap in the spare.",
    ]
    assert split_compound(
        "Start the servers and check the health endpoint and restart the proxy."
    ) == [
        "Start the servers.",
        "Check the health endpoint.",
        "Restart the proxy.",
    ]
    # "and" before no verb of instructions, no instruction first, or a piece too short
    for whole in (
        "Add 50 g of flour and 50 g of water.",
        "Add salt and pepper to taste.",
        "Press and hold the button for five seconds.",
        "Mix the flour and white sugar in a bowl.",
        "The script builds the image and pushes it.",
        "Open the case and remove it.",
    ):
        assert split_compound(whole) == [whole]


def test_a_rewrite_counts_only_with_a_verbatim_referent() -> None:
    claim = "They named the first after Marie's homeland, Poland."
    good = "Marie and Pierre Curie named polonium after Marie's homeland, Poland."
    assert accept_rewrite(claim, good, REFERENCE)
    # a subject the reference never names: invented
    invented = "The French scientists named polonium after Marie's homeland, Poland."
    assert not accept_rewrite(claim, invented, REFERENCE)
    # a fact dropped on the way
    assert not accept_rewrite(
        claim, "Marie and Pierre Curie named polonium after Poland.", REFERENCE
    )
    # a definite description replaced by the name it stands for
    assert accept_rewrite(
        "The company later moved into rubber.", "Nokia later moved into rubber.", REFERENCE
    )
    assert not accept_rewrite(
        "The company later moved into rubber.", "Nokia later moved into rubber in 1900.", REFERENCE
    )
    # no change is no resolution
    assert not accept_rewrite(claim, claim, REFERENCE)
    # nor a referent the claim already names: the judge picked the wrong name
    python = "Python was created by Guido van Rossum. Its name comes from Monty Python."
    assert not accept_rewrite(
        "Its name comes from Monty Python.",
        "Monty Python's name comes from Monty Python.",
        python,
    )
    assert accept_rewrite(
        "Its name comes from Monty Python.", "Python's name comes from Monty Python.", python
    )
    # also when the name holds a possessive (the seeds' example sample 0 did this)
    eiffel = (
        "The Eiffel Tower is in Paris. It was designed by Gustave Eiffel's engineering company."
    )
    designed = "It was designed by Gustave Eiffel's engineering company."
    assert not accept_rewrite(
        designed,
        "Gustave Eiffel's engineering company was designed by Gustave Eiffel's "
        "engineering company.",
        eiffel,
    )
    assert accept_rewrite(
        designed, "The Eiffel Tower was designed by Gustave Eiffel's engineering company.", eiffel
    )
    # nor a referent the claim already says in lower case
    oil = "vegi oils boiling point is somewhere around 320 degrees."
    assert not accept_rewrite(
        "The boiling point of vegi oil is 320 degrees.",
        "Vegi oil point of vegi oil is 320 degrees.",
        oil,
    )
    # nor a rewrite that only drops the article, or repeats the words beside the referent
    wing = "The hospital opened a new emergency wing in 2022. The building has 40 beds."
    assert not accept_rewrite("The building has 40 beds.", "Building has 40 beds.", wing)
    assert not accept_rewrite(
        "The new emergency wing opened.", "New emergency wing emergency wing opened.", wing
    )


@pytest.mark.parametrize(
    ("words", "referent", "expected"),
    [
        ("They", "The Beatles", True),
        ("They", "Apple", True),  # a company as "they": a name
        ("Both", "the billing-export and log-compaction jobs", True),
        ("Each of them", "our team", False),  # plural words, a singular description
        ("The company", "Nokia", True),
        ("this mission", "the Rosetta mission", True),
        ("The staff", "The hospital", False),  # a description for another description
        ("The boiling", "Vegi oil", False),  # capitalised by the judge, not a name
        ("The larger of the two", "Jupiter", True),
        ("It", "the bridge", True),
        ("it", "you", False),  # a pronoun resolves nothing
        ("They", " ", False),
    ],
)
def test_a_referent_must_fit_the_words_it_replaces(
    words: str, referent: str, expected: bool
) -> None:
    reference = (
        "The Beatles formed in Liverpool. Apple sold phones. Nokia was founded in 1865. The "
        "hospital hired staff. The Rosetta mission reached a comet. Jupiter is large. vegi oil "
        "boils at 320 degrees. Don't feel forced to change it, you know."
    )
    assert fits(words, referent, reference) is expected


def test_the_referring_words_are_replaced_by_the_referent() -> None:
    def swap(claim: str, referent: str) -> str:
        span = referring_span(claim)
        assert span is not None
        return resolved(claim, span, referent)

    assert swap("The company later moved.", "Nokia") == "Nokia later moved."
    assert swap("Neither of them married.", "the Wright brothers") == (
        "Neither of the Wright brothers married."
    )
    assert swap("The larger of the two has 95 moons.", "Jupiter") == "Jupiter has 95 moons."
    assert swap("Neither of these worked.", "the two fixes") == "Neither of the two fixes worked."
    # "the first" before a noun is a description ("the first number"), not an ordinal alone
    assert referring_span("The first number will stand out.") == (0, 16)
    prices = "Look at the prices: the first number stands out."
    assert not fits("The first number", "Prices", prices)
    # "these" before a noun is a determiner: the description is the span, not the word
    assert referring_span("In either of these sleep positions, it is easier.") == (13, 24)
    assert swap("Their last album was Abbey Road.", "The Beatles") == (
        "The Beatles' last album was Abbey Road."
    )
    assert swap("By 1998 it was the largest.", "Nokia") == "By 1998 Nokia was the largest."
    assert referring_span("Nokia entered mobile phones.") is None


def _judge(referents: dict[str, str] | None, claims: list[str]) -> ScriptedJudge:
    """Splits into ``claims``; names the referent of the asked words from ``referents``."""

    def reply(messages: Any) -> Any:
        system = str(messages[0].content)
        if system.startswith("You resolve references"):
            words = str(messages[1].content).rsplit('Words: "', 1)[1].rstrip('"')
            return {"referent": (referents or {}).get(words, "")}
        if system.startswith("You split an answer"):
            return {"claims": claims}
        return keyword_reply(messages)

    return ScriptedJudge(reply=reply)


SAMPLE = {
    "user_input": "What did the Curies do?",
    "reference": CURIES,
    "retrieved_contexts": ["The Curies named polonium after Poland."],
}
SPLIT = [
    "Marie and Pierre Curie discovered polonium and radium in 1898.",
    "They named the first after Marie's homeland, Poland.",
]


REWRITE = "Marie and Pierre Curie named polonium after Marie's homeland, Poland."
NAMES = {"They": "Marie and Pierre Curie", "the first": "polonium"}


def test_claims_are_decontextualised_after_the_split() -> None:
    judge = _judge(NAMES, SPLIT)
    recall = ContextRecall(judge, cache=ClaimCache(), strategy="per_claim")
    claim_set = recall.claim_set(SAMPLE)
    assert claim_set.claims == [SPLIT[0], REWRITE]
    assert claim_set.usage.calls == 3  # the split, then one call for each referring span
    asked = str(judge.calls[1][-1].content)
    assert 'Words: "the first"' in asked and CURIES in asked
    result = recall.score(SAMPLE)
    assert not any(v.unresolved for v in result.verdicts)


def test_an_invented_referent_keeps_the_claim_and_marks_it() -> None:
    judge = _judge({"the first": "the French element"}, SPLIT)
    recall = ContextRecall(judge, cache=ClaimCache(), strategy="per_claim")
    result = recall.score(SAMPLE)
    assert result.claims == SPLIT
    assert [v.unresolved for v in result.verdicts] == [False, True]


def test_an_empty_referent_keeps_the_claim() -> None:
    claim_set = ContextRecall(_judge({}, SPLIT), cache=ClaimCache()).claim_set(SAMPLE)
    assert claim_set.claims == SPLIT


def test_claims_that_stand_alone_cost_no_call() -> None:
    alone = ["Marie and Pierre Curie discovered polonium and radium in 1898."]
    judge = _judge(None, alone)
    claim_set = ContextRecall(judge, cache=ClaimCache()).claim_set(
        {**SAMPLE, "reference": alone[0]}
    )
    assert claim_set.claims == alone and claim_set.usage.calls == 1


def test_compound_claims_are_split_before_the_rewrite() -> None:
    judge = _judge(
        {"The company": "Nokia"},
        ["Nokia was founded in 1865; the company later moved into rubber."],
    )
    claim_set = ContextRecall(judge, cache=ClaimCache()).claim_set({**SAMPLE, "reference": NOKIA})
    assert claim_set.claims == ["Nokia was founded in 1865.", "Nokia later moved into rubber."]


def test_a_clause_the_judge_dropped_is_added_when_it_holds_a_name_or_number() -> None:
    reference = f"{REFERENCE} Here is what you need to know about it."
    judge = _judge(NAMES, SPLIT)  # the Nokia sentences lost; the filler holds no fact
    claim_set = ContextRecall(judge, cache=ClaimCache()).claim_set(
        {**SAMPLE, "reference": reference}
    )
    assert claim_set.claims == [SPLIT[0], REWRITE, "Nokia was founded in 1865."]


def test_decontext_prompt_none_turns_it_off() -> None:
    judge = _judge(NAMES, SPLIT)
    claim_set = ContextRecall(judge, cache=ClaimCache(), decontext_prompt=None).claim_set(SAMPLE)
    assert claim_set.claims == SPLIT and claim_set.usage.calls == 1


async def test_async_decontextualises_the_same() -> None:
    sync = ContextRecall(_judge(NAMES, SPLIT), cache=ClaimCache()).claim_set(SAMPLE)
    other = await ContextRecall(_judge(NAMES, SPLIT), cache=ClaimCache()).aclaim_set(SAMPLE)
    assert other.claims == sync.claims == [SPLIT[0], REWRITE]


def test_the_cost_estimate_counts_a_referent_call_per_leaning_sentence(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "200")  # rich wraps tables at the terminal width
    alone = "Apple and Google were founded in California, and both grew fast. Apple sells phones."
    leaning = "Apple and Google were founded in California, and both grew fast. They sell phones."
    costs = []
    for name, reference in (("alone", alone), ("leaning", leaning)):
        data = tmp_path / f"{name}.jsonl"
        row = {"user_input": "q", "reference": reference, "retrieved_contexts": ["x"]}
        data.write_text(json.dumps(row) + "\n", encoding="utf-8")
        args = ["eval", str(data), "--dry-run", "--judge-factory", "fakes:ScriptedJudge"]
        assert main(args) == 0
        text = capsys.readouterr().out
        calls = re.search(r"judge calls\s*│\s*~?(\d+)", text)
        prompt = re.search(r"prompt tokens\s*│\s*~?(\d+)", text)
        assert calls and prompt, text
        costs.append((int(calls.group(1)), int(prompt.group(1))))
    assert costs[1][0] == costs[0][0] + 1
    assert costs[1][1] > costs[0][1]
