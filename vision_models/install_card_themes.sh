#!/bin/sh
# Debian's card themes, an SVG rasteriser and fonts, for training only (never committed; see render/themes.py).
# Idempotent: installs only what is missing. Needs root (or sudo).
set -eu
PKGS="gnome-cards-data kdegames-card-data-kf5 librsvg2-bin"
# fonts for the font variants (render/faces.py, TRAINING_FONT_DIRS): other letterforms and suit glyphs
PKGS="$PKGS fonts-urw-base35 fonts-freefont-ttf fonts-linuxlibertine fonts-texgyre fonts-ebgaramond"
PKGS="$PKGS fonts-crosextra-caladea fonts-open-sans fonts-lato fonts-cantarell fonts-roboto-unhinted"
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
