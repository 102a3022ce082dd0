#!/bin/bash
jq -r '[.[] | select(.active and .age >= 18) | .name] | sort | .[]' /app/users.json > /app/active.txt
