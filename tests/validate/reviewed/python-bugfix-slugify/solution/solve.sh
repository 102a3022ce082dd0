#!/bin/bash
cat > /app/slug.py <<'PY'
import re


def slugify(text):
    """Lower-case words joined by single hyphens; nothing but [a-z0-9-]."""
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")
PY
