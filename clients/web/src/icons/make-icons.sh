#!/usr/bin/env bash
# Renders icon.svg into the PNG icons the web app manifest names (192 and 512 px), with
# Debian's Chromium. Run after changing icon.svg; the PNGs are committed.
set -euo pipefail
cd "$(dirname "$0")"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
printf '<!doctype html><style>html,body{margin:0}img{display:block;width:100vw;height:100vh}</style><img src="file://%s/icon.svg">' "$PWD" > "$tmp/icon.html"
for size in 192 512; do
    "${CHROMIUM:-chromium}" --headless --no-sandbox --disable-gpu --hide-scrollbars \
        --screenshot="$PWD/icon-$size.png" --window-size="$size,$size" "file://$tmp/icon.html"
done
