"""The refresh engine: what a Spark job does to bring a snapshot up to date."""
