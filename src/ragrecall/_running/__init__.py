"""Running: a dataset through an engine under one budget into a results store, with progress;
metrics as specs an engine builds; live logging of retrievals to sinks."""
