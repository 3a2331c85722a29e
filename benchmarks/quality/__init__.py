"""What the scores are worth: agreement with people, calibration, intervals, decomposition."""
