#!/bin/bash
set -euo pipefail
cd /app
cat > /app/rotate.sh <<'SH'
#!/bin/bash
# Keep the KEEP newest backup-YYYYMMDD-HHMMSS.tar.gz files in BACKUP_DIR.
set -u

usage() {
    echo "usage: rotate.sh [--dry-run] BACKUP_DIR KEEP" >&2
    exit 2
}

dry_run=0
if [ "${1:-}" = "--dry-run" ]; then
    dry_run=1
    shift
fi
[ "$#" -eq 2 ] || usage
dir=$1
keep=$2

if ! [[ "$keep" =~ ^[0-9]+$ ]]; then
    echo "rotate.sh: KEEP must be a non-negative integer, got '$keep'" >&2
    exit 2
fi
if [ ! -d "$dir" ]; then
    echo "rotate.sh: not a directory: $dir" >&2
    exit 2
fi
keep=$((10#$keep))

backups=()
for path in "$dir"/backup-*.tar.gz; do
    name=${path##*/}
    if [[ -f "$path" && "$name" =~ ^backup-[0-9]{8}-[0-9]{6}\.tar\.gz$ ]]; then
        backups+=("$name")
    fi
done

# Fixed-width timestamps: lexical order == chronological order.
sorted=()
if [ "${#backups[@]}" -gt 0 ]; then
    mapfile -t sorted < <(printf '%s\n' "${backups[@]}" | LC_ALL=C sort)
fi

total=${#sorted[@]}
excess=$(( total > keep ? total - keep : 0 ))
for (( i = 0; i < excess; i++ )); do
    name=${sorted[$i]}
    if [ "$dry_run" -eq 0 ]; then
        rm -f -- "$dir/$name" || { echo "rotate.sh: failed to delete $name" >&2; exit 1; }
    fi
    printf '%s\n' "$name"
done
exit 0
SH
chmod +x /app/rotate.sh
/app/rotate.sh /app/backups 4
