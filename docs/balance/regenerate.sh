#!/usr/bin/env bash
# Regenerates every report under docs/balance/ (see README.md there). Deterministic: the
# same seeds give the same files on any machine and thread count. About 10 minutes on 2 quiet cores.
set -euo pipefail
cd "$(dirname "$0")/../.."
cargo build --release -q
sim() { ./target/release/stammtisch simulate --seed 0 "$@"; }
out=docs/balance

# Nimm oder schieb: chips, cards, pots and the seat advantage by player count.
sim --ruleset nimm-oder-schieb --players 3,4,5,6,7 --strategies heuristic --games 20000 \
    --out "$out/nos-heuristic"

# The row games: penalties per deal and the seat advantage by variant and player count.
sim --ruleset 6-nimmt --preset standard,taktik,logik,profi --players 3,4,5,6 \
    --strategies heuristic --games 4000 --out "$out/six-heuristic"
sim --ruleset 11-nimmt --players 3,4,5,6 --strategies heuristic --games 4000 \
    --out "$out/eleven-heuristic"
sim --ruleset x-nimmt --players 2,3,4 --strategies heuristic --games 4000 \
    --out "$out/x-heuristic"

# Skill: one expert against three random bots, in every variant.
sim --ruleset 6-nimmt --preset standard,taktik,logik,profi --players 4 \
    --strategies expert=1,random --games 300 --out "$out/skill-six"
for r in 11-nimmt x-nimmt nimm-oder-schieb; do
  sim --ruleset "$r" --players 4 --strategies expert=1,random --games 300 --out "$out/skill-$r"
done
