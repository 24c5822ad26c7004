#!/usr/bin/env bash
# May I? Table: the one-command installer for Raspberry Pi OS Lite 64-bit (bookworm or later).
#
#   sudo ./firmware_config/install.sh              install or update this checkout on this Pi
#   ./firmware_config/install.sh --dry-run         print every step, change nothing (any machine)
#   ./firmware_config/install.sh --root DIR        place the files under DIR (an image being built, a test);
#                                                  apt-get, useradd, pip and systemctl are printed, not run
#
# What it does, in order (every step is safe to repeat: a second run leaves the same files):
#   1. apt-get install python3-venv python3-picamera2 and the DejaVu fonts
#   2. the system user mayi-table, in the groups video (camera) and gpio (buttons, LEDs)
#   3. copies this repository to /opt/mayi-table/app (without .venv, .git, caches and training output)
#   4. the virtualenv /opt/mayi-table/venv (with the system site packages, for picamera2) and
#      pip install '/opt/mayi-table/app[pi]'
#   5. /etc/mayi-table/config.yaml from firmware_config/mayi-table.yaml, only if there is none yet
#   6. /etc/systemd/system/mayi-table.service from systemd/mayi-table.service
#   7. appends firmware_config/config.txt.fragment to /boot/firmware/config.txt, once (a reboot applies it)
#   8. systemctl daemon-reload, systemctl enable --now mayi-table (restart when it was running already)
#
# The service runs `mayi-table run --config /etc/mayi-table/config.yaml`, the device's main loop. That
# command is the eventual entry point and does not exist yet: until it does, step 8 reports that the
# service did not start.
set -euo pipefail

APP_USER=mayi-table
APP_GROUPS=video,gpio
SERVICE=mayi-table
APT_PACKAGES=(python3-venv python3-picamera2 fonts-dejavu-core fonts-dejavu-extra)
MARKER='# >>> mayi-table'

# paths on the target system (prefixed with --root DIR when given)
APP_DIR=/opt/mayi-table/app
VENV_DIR=/opt/mayi-table/venv
CONFIG_DIR=/etc/mayi-table
CONFIG_FILE=$CONFIG_DIR/config.yaml
UNIT_FILE=/etc/systemd/system/$SERVICE.service
BOOT_CONFIG=/boot/firmware/config.txt
STATE_DIR=/var/lib/mayi-table

SRC_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
SRC_CONFIG=$SRC_DIR/firmware_config/mayi-table.yaml
SRC_FRAGMENT=$SRC_DIR/firmware_config/config.txt.fragment
SRC_UNIT=$SRC_DIR/systemd/mayi-table.service

# what the copy of the repository leaves out: anywhere in the tree ...
EXCLUDE_ANYWHERE=(.venv .git __pycache__ .mypy_cache .ruff_cache .pytest_cache .hypothesis '*.egg-info' '*.pyc')
# ... and at its top (training data, training runs, build output, Ultralytics' settings)
EXCLUDE_TOP=(data runs build out dist vision_models/ultralytics_config)

usage() {
    cat <<EOF
usage: install.sh [--dry-run] [--root DIR]

Installs the May I? Table service from this checkout ($SRC_DIR).
  --dry-run    print what would be done; write nothing, run nothing
  --root DIR   place every file under DIR instead of /; print (do not run) apt-get, useradd,
               pip and systemctl, as they would run inside DIR (e.g. in a chroot)
  -h, --help   this help
Without --dry-run or --root it must run as root on a Raspberry Pi.
EOF
}

die() {
    echo "install.sh: $*" >&2
    exit 2
}

DRY_RUN=0
ROOT=
ROOT_GIVEN=0
while (($#)); do
    case $1 in
    --dry-run) DRY_RUN=1 ;;
    --root)
        (($# >= 2)) && [[ -n $2 ]] || die "--root needs a folder (try --help)"
        ROOT=$2
        ROOT_GIVEN=1
        shift
        ;;
    --root=*)
        ROOT=${1#--root=}
        [[ -n $ROOT ]] || die "--root needs a folder (try --help)"
        ROOT_GIVEN=1
        ;;
    -h | --help)
        usage
        exit 0
        ;;
    *) die "unknown option: $1 (try --help)" ;;
    esac
    shift
done

if ((ROOT_GIVEN)); then
    ROOT=$(realpath -m -- "$ROOT")
    [[ $ROOT != / ]] || ROOT=
fi

# EXECUTE: run system commands (apt-get, useradd, pip, systemctl) only for a real install on this Pi
if ((DRY_RUN || ROOT_GIVEN)); then EXECUTE=0; else EXECUTE=1; fi

if ((EXECUTE)); then
    model=
    if [[ -r /proc/device-tree/model ]]; then model=$(tr -d '\0' </proc/device-tree/model); fi
    if [[ $model != *"Raspberry Pi"* ]]; then
        die "this is not a Raspberry Pi (/proc/device-tree/model: ${model:-missing}).
Nothing was changed. To see what the installer would do, use --dry-run; to place the files into a folder, use --root DIR."
    fi
    arch=$(uname -m)
    [[ $arch == aarch64 ]] || die "this needs 64-bit Raspberry Pi OS (aarch64); this system is $arch. Nothing was changed."
    ((EUID == 0)) || die "run it as root: sudo $0. Nothing was changed."
    export DEBIAN_FRONTEND=noninteractive
fi

for f in "$SRC_CONFIG" "$SRC_FRAGMENT" "$SRC_UNIT" "$SRC_DIR/pyproject.toml"; do
    [[ -f $f ]] || die "$f is missing: run install.sh from a complete checkout of the repository"
done

# ---------------------------------------------------------------- helpers

step() { printf '\n==> %s\n' "$*"; }
note() { printf '    %s\n' "$*"; }

# a command line as it would be typed: words with shell characters in single quotes
quoted() {
    local out= word
    for word in "$@"; do
        if [[ $word =~ ^[A-Za-z0-9_./:=,+@%-]+$ ]]; then out+=" $word"; else out+=" '${word//\'/\'\\\'\'}'"; fi
    done
    printf '%s' "${out# }"
}

# a command that changes the system: run it, or only print it (--root, --dry-run)
run() {
    if ((EXECUTE)); then
        printf '    + %s\n' "$(quoted "$@")"
        "$@"
    else
        printf '    would run: %s\n' "$(quoted "$@")"
    fi
}

# file placement happens for a real install and with --root, never with --dry-run
writes() { ((DRY_RUN == 0)); }

# ---------------------------------------------------------------- what and where

if ((DRY_RUN)); then
    echo "May I? Table installer: DRY RUN, nothing is written or run."
elif ((ROOT_GIVEN)); then
    echo "May I? Table installer: placing files under ${ROOT:-/}; system commands are printed, not run."
else
    echo "May I? Table installer: installing on ${model}."
fi
echo "Source: $SRC_DIR"
[[ -z $ROOT ]] || echo "Target root: $ROOT"

# ---------------------------------------------------------------- 1. system packages

step "1/8 system packages"
run apt-get update
run apt-get install -y "${APT_PACKAGES[@]}"

# ---------------------------------------------------------------- 2. service user

step "2/8 service user $APP_USER (groups $APP_GROUPS)"
if ((EXECUTE)); then
    getent group gpio >/dev/null || run groupadd --system gpio
    if id -u "$APP_USER" >/dev/null 2>&1; then
        note "user $APP_USER exists"
        run usermod --append --groups "$APP_GROUPS" "$APP_USER"
    else
        run useradd --system --user-group --groups "$APP_GROUPS" --home-dir "$STATE_DIR" --no-create-home \
            --shell /usr/sbin/nologin --comment "May I? Table referee" "$APP_USER"
    fi
else
    note "(skipped if the user exists; then only its groups are made sure of)"
    run useradd --system --user-group --groups "$APP_GROUPS" --home-dir "$STATE_DIR" --no-create-home \
        --shell /usr/sbin/nologin --comment "May I? Table referee" "$APP_USER"
fi

# ---------------------------------------------------------------- 3. the application

step "3/8 application -> $ROOT$APP_DIR"
tar_excludes=()
for pattern in "${EXCLUDE_ANYWHERE[@]}"; do tar_excludes+=("--exclude=$pattern"); done
tar_excludes+=(--anchored)
for path in "${EXCLUDE_TOP[@]}"; do tar_excludes+=("--exclude=./$path"); done
if writes; then
    staging=$ROOT$APP_DIR.new
    rm -rf -- "$staging"
    mkdir -p -- "$staging"
    # a fresh copy replaces the old one whole, so files deleted from the checkout go from the device too
    tar -C "$SRC_DIR" "${tar_excludes[@]}" -cf - . | tar -C "$staging" --no-same-owner -xf -
    chmod -R u=rwX,go=rX -- "$staging"
    rm -rf -- "$ROOT$APP_DIR"
    mv -- "$staging" "$ROOT$APP_DIR"
    note "copied $(find "$ROOT$APP_DIR" -type f | wc -l) files (without .venv, .git, caches, data, runs, build output)"
else
    note "would copy $SRC_DIR to $ROOT$APP_DIR (without .venv, .git, caches, data, runs, build output)"
fi

# ---------------------------------------------------------------- 4. virtualenv

step "4/8 virtualenv $ROOT$VENV_DIR"
if ((EXECUTE)) && [[ -x $VENV_DIR/bin/python ]]; then
    note "the virtualenv exists: updating it"
else
    run python3 -m venv --system-site-packages "$VENV_DIR"
fi
run "$VENV_DIR/bin/pip" install "$APP_DIR[pi]"

# ---------------------------------------------------------------- 5. configuration

step "5/8 configuration $ROOT$CONFIG_FILE"
if [[ -e $ROOT$CONFIG_FILE ]]; then
    note "kept: $ROOT$CONFIG_FILE exists (never overwritten; the default is $APP_DIR/firmware_config/mayi-table.yaml)"
elif writes; then
    install -d -m 0755 -- "$ROOT$CONFIG_DIR"
    install -m 0640 -- "$SRC_CONFIG" "$ROOT$CONFIG_FILE"
    note "installed the default configuration: change host_pin in it"
    # the service reads it as group mayi-table; it holds the host PIN, so nobody else may
    run chown "root:$APP_USER" "$CONFIG_FILE"
else
    note "would install $SRC_CONFIG as $ROOT$CONFIG_FILE (mode 0640)"
    run chown "root:$APP_USER" "$CONFIG_FILE"
fi

# ---------------------------------------------------------------- 6. systemd unit

step "6/8 systemd unit $ROOT$UNIT_FILE"
if writes; then
    install -d -m 0755 -- "$(dirname "$ROOT$UNIT_FILE")"
    install -m 0644 -- "$SRC_UNIT" "$ROOT$UNIT_FILE"
    note "installed"
else
    note "would install $SRC_UNIT as $ROOT$UNIT_FILE"
fi

# ---------------------------------------------------------------- 7. boot configuration

step "7/8 boot configuration"
boot_config=$ROOT$BOOT_CONFIG
if ((EXECUTE)) && [[ ! -e $boot_config && -e /boot/config.txt ]]; then
    boot_config=/boot/config.txt # Raspberry Pi OS before bookworm
fi
if [[ -f $boot_config ]] && grep -q "^$MARKER" -- "$boot_config"; then
    note "$boot_config already has the mayi-table block"
elif writes; then
    mkdir -p -- "$(dirname "$boot_config")"
    touch -- "$boot_config"
    # start on a line of its own, even when the file does not end with a newline
    if [[ -s $boot_config && -n $(tail -c 1 -- "$boot_config") ]]; then echo >>"$boot_config"; fi
    cat -- "$SRC_FRAGMENT" >>"$boot_config"
    note "appended the mayi-table block to $boot_config: reboot to apply the camera and GPIO settings"
else
    note "would append $SRC_FRAGMENT to $boot_config"
fi

# ---------------------------------------------------------------- 8. service

step "8/8 service $SERVICE"
was_active=0
if ((EXECUTE)) && systemctl is-active --quiet "$SERVICE"; then was_active=1; fi
run systemctl daemon-reload
if ! run systemctl enable --now "$SERVICE"; then
    echo "install.sh: $SERVICE did not start. See why: journalctl -u $SERVICE -b" >&2
    echo "(until the device's main loop, mayi-table run, exists, this is expected)" >&2
    exit 1
fi
if ((was_active)); then run systemctl restart "$SERVICE"; fi

echo
if ((EXECUTE)); then
    echo "Done. Check the device with: $VENV_DIR/bin/mayi-table doctor (when it exists); logs: journalctl -u $SERVICE -f"
    echo "Edit $CONFIG_FILE (change host_pin!), then: sudo systemctl restart $SERVICE"
else
    echo "Done (${ROOT:+files placed under $ROOT, }system commands printed, not run)."
fi
