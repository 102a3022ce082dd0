#!/bin/bash
set -euo pipefail
cat > /app/sum.sh <<'SH'
#!/bin/bash
awk '{ total += $1 } END { print total }' "$1"
SH
chmod +x /app/sum.sh
