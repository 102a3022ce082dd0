import re


def slugify(text):
    """Lower-case words joined by single hyphens; nothing but [a-z0-9-]."""
    text = text.lower()
    text = re.sub(r"[^a-z0-9]", "-", text)
    return text
