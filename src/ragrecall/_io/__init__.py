"""Files in and out, safe against hostile input: rows from JSONL/JSON/CSV/Parquet, rows as
samples, CSV cells written safely, and traces (OTLP, LangSmith) as samples."""
