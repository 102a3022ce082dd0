# report.awk: the nightly latency report of the web tier (ops, 2019).
# Run from cron as:  LC_ALL=C gawk -f report.awk /var/log/web/access.log > report.txt
# A line: TIME SERVICE STATUS LATENCY USER [REQUEST...], e.g.
#   2019-06-02T14:03:11Z checkout 200 184ms user=ana GET /cart
BEGIN {
    slow_ms = 750                # a request slower than this is listed
}
/^#/ || NF == 0 { next }         # comments and blank lines
NF < 5 { cut++; next }           # a line cut short by the log shipper
{
    svc = tolower($2)
    ms = $4 + 0                  # "184ms" -> 184; "-" (no answer) -> 0
    hits[svc]++
    total[svc] += ms
    if (ms > worst[svc]) worst[svc] = ms
    if ($3 >= 500) errors[svc]++ # server errors
    all_ms += ms; all_n++
    if (ms > slow_ms) {
        $1 = substr($1, 0, 13)   # keep the date and the hour
        slow[++n_slow] = $0
    }
    who = $5; sub(/^user=/, "", who)
    if (length(who) > length(longest)) longest = who
}
END {
    PROCINFO["sorted_in"] = "@ind_str_asc"
    printf "%-10s %5s %9s %7s %6s\n", "service", "hits", "mean_ms", "worst", "5xx"
    for (s in hits)
        printf "%-10s %5d %9.2f %7s %6d\n", s, hits[s], total[s] / hits[s], worst[s], errors[s]
    print "requests:", all_n + 0, "mean:", (all_n ? all_ms / all_n : "n/a")
    print "slow (>" slow_ms " ms):", n_slow + 0
    for (i = 1; i <= n_slow; i++) print "  " slow[i]
    print "longest user:", longest, "(" length(longest) " bytes)"
    print "cut lines:", cut + 0
}
