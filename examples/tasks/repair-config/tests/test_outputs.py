import configparser
import hashlib
import json
from pathlib import Path

from agentcall import run_agent  # the launcher (and any module it imports from /app) runs as nobody, never here

APP = Path("/app/server_app.py")
APP_SHA256 = "7152bad0c6092ddae4f98df0fcb05ac7def759172bd99e0c977b00313845ab63"
INI = Path("/app/config/app.ini")
FEATURES = Path("/app/config/features.json")


def run_app(*args):
    return run_agent(["python3", str(APP), *args], cwd="/app", text=True, timeout=30)


def load_ini():
    parser = configparser.ConfigParser(interpolation=None, strict=True)
    parser.read_string(INI.read_text())
    return parser


def test_launcher_unchanged():
    assert hashlib.sha256(APP.read_bytes()).hexdigest() == APP_SHA256


def test_check_passes():
    out = run_app("--check")
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "CONFIG OK"


def test_launcher_starts_with_intended_server_settings():
    out = run_app()
    assert out.returncode == 0, out.stderr
    assert "starting on 0.0.0.0:8080 with 4 workers" in out.stdout


def test_server_section():
    server = load_ini()["server"]
    assert set(server) == {"host", "port", "workers", "debug", "features_file"}
    assert server["host"] == "0.0.0.0"
    assert int(server["port"]) == 8080
    assert int(server["workers"]) == 4
    assert server.getboolean("debug") is False
    assert server["features_file"] == "features.json"


def test_database_section():
    db = load_ini()["database"]
    assert set(db) == {"url", "pool_size", "timeout_sec"}
    assert db["url"] == "sqlite:////app/data/orders.db"
    assert int(db["pool_size"]) == 10
    assert float(db["timeout_sec"]) == 2.5


def test_logging_section():
    parser = load_ini()
    assert sorted(parser.sections()) == ["database", "logging", "server"]
    log = parser["logging"]
    assert log["level"] == "WARNING"
    assert log["file"] == "/var/log/order-service/app.log"


def test_features_file():
    data = json.loads(FEATURES.read_text())
    assert data["flags"] == {"new_checkout": True, "bulk_export": False, "beta_search": True}
    assert data["rollout_percent"] == 25 and type(data["rollout_percent"]) is int
    assert data["regions"] == ["eu-west", "us-east"]
