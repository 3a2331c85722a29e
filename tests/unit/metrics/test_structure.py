"""split_structure: lists, lead-ins, headings, tables and code become units before any model."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ragrecall._metrics.claims.structure import Unit, split_structure


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
