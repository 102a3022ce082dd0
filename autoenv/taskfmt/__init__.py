"""The Harbor task format: loading, checking and hashing tasks."""
