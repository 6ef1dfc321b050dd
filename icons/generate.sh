#!/usr/bin/env bash
# Renders icons/icon.svg to every PNG size Tauri wants (rsvg-convert, from librsvg2-bin); run once after editing
# the SVG and commit the PNGs: building the app needs no SVG tooling.
set -euo pipefail
cd "$(dirname "$0")"
for size in 32 128 256 512; do
  rsvg-convert -w "$size" -h "$size" icon.svg -o "${size}x${size}.png"
done
cp 256x256.png 128x128@2x.png
cp 512x512.png icon.png
