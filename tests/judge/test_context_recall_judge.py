"""ContextRecall end to end on the real embedded judge (seconds per test on two cores)."""

from __future__ import annotations

import pytest

from ragrecall import ClaimCache, ContextRecall, evaluate
from ragrecall.judges import LocalJudge

pytestmark = pytest.mark.judge

SAMPLE = {
    "user_input": "When was the Eiffel Tower completed, and where is it?",
    "reference": "The Eiffel Tower was completed in 1889. The Eiffel Tower is in Rome.",
    "retrieved_contexts": [
        {"id": "fruit", "text": "Bananas are rich in potassium and grow in tropical regions."},
        {
            "id": "tower",
            "text": "The Eiffel Tower stands in Paris. It was completed in 1889 "
            "for the World's Fair.",
        },
    ],
}


def test_supported_and_unsupported_claims_with_evidence(local_judge: LocalJudge) -> None:
    result = ContextRecall(local_judge, claims="sentences", cache=ClaimCache()).score(SAMPLE)
    assert result.status == "scored" and result.score == 0.5
    supported, unsupported = result.verdicts
    assert supported.attributed and supported.chunk_ids == ["tower"]
    assert supported.evidence == "It was completed in 1889 for the World's Fair."
    assert supported.p_supported is not None and supported.p_supported > 0.5
    assert not unsupported.attributed
    assert unsupported.p_supported is not None and unsupported.p_supported < 0.5
    assert result.missing == ["The Eiffel Tower is in Rome."]
    # The chunks come first and are identical for both claims: the second reuses the cache.
    assert result.usage.calls == 2 and result.usage.cached_tokens > 0
    assert result.judge is not None and result.judge.provider == "ragrecall-local"


def test_atomic_decomposition_and_batch(local_judge: LocalJudge) -> None:
    metric = ContextRecall(local_judge, cache=ClaimCache())
    report = evaluate([SAMPLE, {**SAMPLE, "retrieved_contexts": []}], [metric])
    first, empty = report.results["context_recall"]
    assert first.status == "scored" and 2 <= len(first.claims) <= 4
    assert any("1889" in c for c in first.claims) and any("Rome" in c for c in first.claims)
    rome = next(v for v in first.verdicts if "Rome" in v.claim)
    assert not rome.attributed
    assert empty.score == 0.0 and empty.reason == "no retrieved contexts"
    assert empty.claims == first.claims  # decomposed once, from the cache


AKS = {
    "user_input": "How do I deploy my app to AKS?",
    "reference": "To deploy to AKS:\n1. Build the Docker image.\n"
    "2. Push the image to Azure Container Registry (ACR).\n"
    "3. Create the AKS cluster with `az aks create`.\n"
    "4. Get the cluster credentials with `az aks get-credentials`.\n"
    "5. Write the deployment YAML.\n6. Apply it with `kubectl apply -f deployment.yaml`.",
    "retrieved_contexts": [
        "Push your image to Azure Container Registry with "
        "`docker push myregistry.azurecr.io/app:v1` after `az acr login`.",
        "Create a cluster with `az aks create --resource-group rg --name aks1 --node-count 2`.",
        "Run `az aks get-credentials --resource-group rg --name aks1` to configure kubectl for "
        "the cluster.",
    ],
}


def test_a_numbered_reference_with_a_lead_in(local_judge: LocalJudge) -> None:
    """The issue's deployment example: six steps, three retrieved; the heading is no claim."""
    result = ContextRecall(local_judge, cache=ClaimCache()).score(AKS)
    assert len(result.claims) == 6 and all(
        c.startswith("To deploy to AKS, ") for c in result.claims
    )
    assert result.score == 0.5
    assert result.missing == [
        "To deploy to AKS, build the Docker image.",
        "To deploy to AKS, write the deployment YAML.",
        "To deploy to AKS, apply it with `kubectl apply -f deployment.yaml`.",
    ]
    assert result.usage.calls == 6  # no decomposition call: the list was split by its structure
