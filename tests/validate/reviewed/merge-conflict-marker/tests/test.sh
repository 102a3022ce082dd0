#!/bin/bash
mkdir -p /logs/verifier
if grep -qx 'max_connections = 200' /app/config/server.ini && [ "$(grep -c '' /app/config/server.ini)" = 8 ]; then
  echo 1 > /logs/verifier/reward.txt
else
  echo 0 > /logs/verifier/reward.txt
fi
