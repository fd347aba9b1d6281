# The mean round_seconds of rounds ≥ 1 of a run's timings.jsonl (round 0
# of a deployed run includes its processes' start-up):
#   awk -f bench/mean_round.awk RUN/timings.jsonl
match($0, /"round_seconds":[0-9.eE+-]+/) { v = substr($0, RSTART + 16, RLENGTH - 16); if (n++ > 0) { s += v; k++ } }
END { printf "%.3f", s / k }
