"""In-memory inventory service: domain model, request handler and JSON storage."""
