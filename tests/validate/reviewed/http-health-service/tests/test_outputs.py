import json
import urllib.error
import urllib.request

import pytest


def test_health():
    with urllib.request.urlopen("http://127.0.0.1:8000/health", timeout=5) as resp:
        assert resp.status == 200
        assert json.loads(resp.read()) == {"status": "ok", "version": "1.2.0"}


def test_unknown_path_is_404():
    with pytest.raises(urllib.error.HTTPError) as err:
        urllib.request.urlopen("http://127.0.0.1:8000/nope", timeout=5)
    assert err.value.code == 404
