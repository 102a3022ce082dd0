#!/bin/bash
# every report line must say VALID or INVALID, and every repaired file must be clean
mkdir -p /logs/verifier
ok=1
[ -s /app/validation.txt ] || ok=0
while read -r line; do
  case "$line" in *VALID) ;; *) ok=0 ;; esac
done < /app/validation.txt
for f in /app/repaired/*.ini; do
  [ -e "$f" ] || continue
  if grep -vqE '^(\[[^]]+\]|[A-Za-z_]+ = .*|)$' "$f"; then ok=0; fi
done
echo "report ok=$ok"
echo $ok > /logs/verifier/reward.txt
