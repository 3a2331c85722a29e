"""The statistics: PPI-corrected means, per-answer intervals, calibration measures, and the
paired tests behind ``ragrecall.stats``. Imports nothing of ragrecall."""
