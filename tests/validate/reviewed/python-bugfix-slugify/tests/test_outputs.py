import sys

sys.path.insert(0, "/app")
from slug import slugify


def test_examples():
    assert slugify("  Hello,  World! ") == "hello-world"
    assert slugify("Rock & Roll 2") == "rock-roll-2"
    assert slugify("---") == ""
    assert slugify("already-a-slug") == "already-a-slug"
