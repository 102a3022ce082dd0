#!/bin/bash
mkdir -p /logs/verifier
if grep -qx 'LOG_LEVEL=debug' /app/.env && grep -q '^DATABASE_URL=' /app/.env; then echo 1 > /logs/verifier/reward.txt; else echo 0 > /logs/verifier/reward.txt; fi
