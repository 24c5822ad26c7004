#!/bin/sh
# Debian's card themes and an SVG rasteriser, for training only (never committed; see render/themes.py).
# Idempotent: installs only what is missing. Needs root (or sudo).
set -eu
PKGS="gnome-cards-data kdegames-card-data-kf5 librsvg2-bin"
missing=""
for p in $PKGS; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
if [ -z "$missing" ]; then
    echo "card themes: all installed ($PKGS)"
    exit 0
fi
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
$SUDO apt-get update -q
# no recommends: the theme data and rsvg-convert are all the renderer reads
$SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends $missing
echo "card themes: installed$missing"
