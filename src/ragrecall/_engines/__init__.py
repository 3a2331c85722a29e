"""Where a dataset is scored: the engine interface (``base``) and the local engine
(``local``). Batch mode's engine lives in ``_batch``, Ray's in ``ragrecall.ray``."""
