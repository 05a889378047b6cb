#!/bin/bash
# Compares two builds of netreturn-sim on the AWM, NGWA and SARBE families
# (every metric and per-flow row, minus wall-time lines), default
# parameters, seeds 1-2: the old binary on the old tree's scenario files,
# the new binary on the new tree's, so a change of file syntax (say, a key
# moved into a table) is compared by what it runs. Prints each run that
# differs. Beside scripts/compare_builds.sh (EWT, 360 runs).
#   scripts/compare_families.sh OLD_BINARY NEW_BINARY OLD_SCENARIOS_DIR NEW_SCENARIOS_DIR
OLD=$1; NEW=$2; OLDDIR=$3; NEWDIR=$4
n=0; d=0
for f in awm/capacity awm/fairness awm/flows awm/parking-lot awm/rtt awm/web ngwa/rate ngwa/window sarbe/ack_compression sarbe/cwnd_traces sarbe/fairness sarbe/friendliness sarbe/lossy_link sarbe/tracking; do
  for s in 1 2; do
    n=$((n+1))
    a=$(timeout 300 "$OLD" "$OLDDIR/$f.toml" --seed $s --per-flow 2>&1 | grep -v -E "wall|per_s" | md5sum)
    b=$(timeout 300 "$NEW" "$NEWDIR/$f.toml" --seed $s --per-flow 2>&1 | grep -v -E "wall|per_s" | md5sum)
    [ "$a" = "$b" ] || { d=$((d+1)); echo "DIFF $f seed=$s"; }
  done
done
echo "compared $n runs, $d differ"
[ $d -eq 0 ]
