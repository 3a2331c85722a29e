"""Batch mode: a judge answered through a provider's Batch API: the engine (``engine``), the
rounds that replay samples (``rounds``), the provider's side of the batches (``batches``,
``api``), the exchange that answers the judge from their results and the run's journal."""
