#!/usr/bin/env python3
"""Order-service launcher.

    python3 server_app.py --check    validate the configuration and exit
    python3 server_app.py            validate, then print the start-up banner

The configuration lives in CONFIG_DIR (default /app/config): app.ini plus the
JSON feature file that app.ini points to.
"""

import configparser
import json
import os
import re
import sys

CONFIG_DIR = os.environ.get("APP_CONFIG_DIR", "/app/config")
LOG_LEVELS = {"DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"}
REQUIRED = {
    "server": {"host", "port", "workers", "debug", "features_file"},
    "database": {"url", "pool_size", "timeout_sec"},
    "logging": {"level", "file"},
}


class ConfigError(Exception):
    pass


def _int_in_range(section, key, lo, hi, errors):
    raw = section.get(key)
    try:
        value = int(raw)
    except (TypeError, ValueError):
        errors.append(f"[{section.name}] {key}: expected an integer, got {raw!r}")
        return None
    if not lo <= value <= hi:
        errors.append(f"[{section.name}] {key}: {value} is outside {lo}..{hi}")
        return None
    return value


def load_settings(config_dir=CONFIG_DIR):
    ini_path = os.path.join(config_dir, "app.ini")
    parser = configparser.ConfigParser(interpolation=None, strict=True)
    try:
        with open(ini_path) as fh:
            parser.read_file(fh)
    except FileNotFoundError:
        raise ConfigError(f"{ini_path}: file not found")
    except configparser.Error as exc:
        raise ConfigError(f"{ini_path}: {exc}")

    errors = []
    for name, keys in REQUIRED.items():
        if not parser.has_section(name):
            errors.append(f"missing section [{name}]")
            continue
        missing = keys - set(parser[name])
        if missing:
            errors.append(f"[{name}] missing keys: {', '.join(sorted(missing))}")
        unknown = set(parser[name]) - keys
        if unknown:
            errors.append(f"[{name}] unknown keys: {', '.join(sorted(unknown))}")
    extra = set(parser.sections()) - set(REQUIRED)
    if extra:
        errors.append(f"unknown sections: {', '.join(sorted(extra))}")
    if errors:
        raise ConfigError("; ".join(errors))

    server, db, log = parser["server"], parser["database"], parser["logging"]
    settings = {"server": {}, "database": {}, "logging": {}}

    host = server.get("host", "").strip()
    if not host:
        errors.append("[server] host: must not be empty")
    settings["server"]["host"] = host
    settings["server"]["port"] = _int_in_range(server, "port", 1024, 65535, errors)
    settings["server"]["workers"] = _int_in_range(server, "workers", 1, 32, errors)
    try:
        settings["server"]["debug"] = server.getboolean("debug")
    except ValueError:
        errors.append(f"[server] debug: expected a boolean, got {server.get('debug')!r}")

    url = db.get("url", "")
    if not re.fullmatch(r"sqlite:///\S+", url):
        errors.append(f"[database] url: expected sqlite:///<path>, got {url!r}")
    settings["database"]["url"] = url
    settings["database"]["pool_size"] = _int_in_range(db, "pool_size", 1, 20, errors)
    try:
        timeout = float(db.get("timeout_sec"))
        if not timeout > 0:
            raise ValueError
        settings["database"]["timeout_sec"] = timeout
    except ValueError:
        errors.append(f"[database] timeout_sec: expected a positive number, got {db.get('timeout_sec')!r}")

    level = log.get("level", "")
    if level not in LOG_LEVELS:
        errors.append(f"[logging] level: {level!r} is not one of {', '.join(sorted(LOG_LEVELS))}")
    settings["logging"]["level"] = level
    log_file = log.get("file", "")
    if not os.path.isabs(log_file):
        errors.append(f"[logging] file: must be an absolute path, got {log_file!r}")
    settings["logging"]["file"] = log_file

    features_path = os.path.join(config_dir, server.get("features_file", ""))
    try:
        with open(features_path) as fh:
            features = json.load(fh)
    except FileNotFoundError:
        errors.append(f"{features_path}: file not found")
        features = None
    except json.JSONDecodeError as exc:
        errors.append(f"{features_path}: invalid JSON: {exc}")
        features = None
    if features is not None:
        settings["features"] = features
        if not isinstance(features, dict) or set(features) != {"flags", "rollout_percent", "regions"}:
            errors.append(f"{features_path}: expected exactly the keys flags, rollout_percent, regions")
        else:
            flags = features["flags"]
            if not isinstance(flags, dict) or not all(isinstance(v, bool) for v in flags.values()):
                errors.append(f"{features_path}: flags must map names to true/false")
            pct = features["rollout_percent"]
            if not isinstance(pct, int) or isinstance(pct, bool) or not 0 <= pct <= 100:
                errors.append(f"{features_path}: rollout_percent must be an integer 0..100, got {pct!r}")
            regions = features["regions"]
            if not isinstance(regions, list) or not regions or not all(isinstance(r, str) and r for r in regions):
                errors.append(f"{features_path}: regions must be a non-empty list of strings")

    if errors:
        raise ConfigError("; ".join(errors))
    return settings


def main(argv):
    try:
        settings = load_settings()
    except ConfigError as exc:
        print(f"CONFIG ERROR: {exc}", file=sys.stderr)
        return 1
    if "--check" in argv:
        print("CONFIG OK")
        return 0
    srv = settings["server"]
    print(f"order-service starting on {srv['host']}:{srv['port']} with {srv['workers']} workers")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
