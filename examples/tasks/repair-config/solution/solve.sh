#!/bin/bash
set -euo pipefail
cd /app
cat > /app/config/app.ini <<'INI'
; Order service configuration
; NOTE (OPS-112): the service listens on port 8080 behind the load balancer.

[server]
host = 0.0.0.0
port = 8080
workers = 4
debug = no
features_file = features.json

[database]
url = sqlite:////app/data/orders.db
; pool size was raised from 5 to 10 after the capacity review
pool_size = 10
timeout_sec = 2.5

[logging]
level = WARNING
file = /var/log/order-service/app.log
INI
cat > /app/config/features.json <<'JSON'
{
  "flags": {
    "new_checkout": true,
    "bulk_export": false,
    "beta_search": true
  },
  "rollout_percent": 25,
  "regions": ["eu-west", "us-east"]
}
JSON
python3 server_app.py --check
