#!/bin/bash
# Compares two builds of netreturn-sim on the runs of `netreturn reproduce ewt
# --quick` (EWT scenarios 1 and 2, six methods, five flow counts, seeds 1-3,
# receive buffer 1 MB and 128 KiB): every metric, per-flow row and per-link
# row, minus wall-time lines and minus per-link columns after the first
# seven (added later builds print more). Prints each run that differs.
#   scripts/compare_builds.sh OLD_BINARY NEW_BINARY [SCENARIO_DIR]
set -u
OLD=$1; NEW=$2; DIR=${3:-$(dirname "$0")/../scenarios/ewt}
n=0; d=0
out() {
  "$1" "$DIR/$2.toml" --seed "$3" --set queue="$4" --set flows="$5" $6 --per-flow --links 2>&1 \
    | grep -v -E "wall|per_s" | awk '/->|^iface / {print $1,$2,$3,$4,$5,$6,$7; next} {print}' | md5sum
}
for sc in scenario1 scenario2; do
  if [ $sc = scenario1 ]; then L="4 8 17 24 32"; else L="4 13 24 31 32"; fi
  for q in droptail red ared ewa awm ewt; do for f in $L; do for s in 1 2 3; do for extra in "" "--set rcv_buf=128KiB"; do
    n=$((n + 1))
    [ "$(out "$OLD" $sc $s $q $f "$extra")" = "$(out "$NEW" $sc $s $q $f "$extra")" ] || { d=$((d + 1)); echo "DIFF $sc $q flows=$f seed=$s $extra"; }
  done; done; done; done
done
echo "compared $n runs, $d differ"
[ $d -eq 0 ]
