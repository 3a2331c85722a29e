"""What scores mean: a run's summary, two runs compared, means corrected by people's labels,
the labels read back, a calibration profile fitted to them, and the verdicts picked for
review. Reads records; never runs a judge."""
