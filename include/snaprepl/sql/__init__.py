"""Pure SQL builders: (dialect, records) -> SQL text, golden-tested per dialect."""
