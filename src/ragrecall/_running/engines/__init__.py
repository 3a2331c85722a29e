"""Where a dataset is scored: the engine interface (``base``), the local engine (``local``)
and its concurrent stream (``stream``), the provider's Batch API (``batch/``) and a Ray
cluster (``ray/``, imported only when asked for)."""
