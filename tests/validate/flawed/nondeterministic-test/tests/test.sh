#!/bin/bash
# --- autoenv guard: grade what the agent left on disk, not what it left running.
# A process the agent started (nohup/setsid/&) survives into the verifier phase
# of a shared-mode Harbor verifier and can rewrite /logs/verifier/reward.* while
# or after the tests run. Freeze, then kill, every process that is not this
# script or one of its ancestors. Tasks whose grading needs a process the agent
# started (a server) must spare it here, or use a separate verifier environment.
# Skipped when PID 1 is a full init system (not a throwaway container/sandbox).
case "$(cat /proc/1/comm 2>/dev/null)" in systemd|init) ;; *)
__keep=" 1 $$ "; __p=$$
while [ "${__p:-0}" -gt 1 ]; do
  __pp=0
  while read -r __k __v __rest; do
    if [ "$__k" = "PPid:" ]; then __pp=$__v; break; fi
  done 2>/dev/null < "/proc/$__p/status"
  __p=$__pp; __keep="$__keep$__p "
done
for __sig in STOP KILL; do
  for __d in /proc/[0-9]*; do
    __pid=${__d#/proc/}
    case "$__keep" in *" $__pid "*) continue ;; esac
    kill -s "$__sig" "$__pid" 2>/dev/null
  done
done
# whatever they wrote before they stopped is not the verifier's
for __f in txt json; do rm -f "/logs/verifier/reward.$__f"; done
unset __keep __p __pp __k __v __rest __sig __d __pid __f ;;
esac
# --- end autoenv guard
mkdir -p /logs/verifier
# the verifier samples whether "grading is enabled": the same solution gets different verdicts
status=$(python3 -c "import os; print('ok' if os.urandom(1)[0] % 2 else 'unavailable')")
if [ "$status" = "ok" ] && [ "$(tr -d '[:space:]' < /app/sum.txt 2>/dev/null)" = "5004" ]; then
  echo 1 > /logs/verifier/reward.txt
else
  echo 0 > /logs/verifier/reward.txt
fi
