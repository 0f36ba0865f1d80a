#!/usr/bin/env bash
# Runs the named device scripts (scripts/device/NAME.sh) one after another on
# the GPU machine, each with its own $OUT folder and time limit, then packs
# every result into one archive: $OUT/results.tgz (the device tool brings back
# at most 8 files). Usage: bash scripts/device/all.sh facts foundation watch fix
set -u
FINAL=$OUT
WORK=$(mktemp -d)
for name in "$@"; do
  limit=240
  [ "$name" = facts ] && limit=150
  mkdir -p "$WORK/$name"
  start=$(date +%s)
  echo "##### $name"
  OUT="$WORK/$name" timeout -k 5 $limit bash "scripts/device/$name.sh" > "$WORK/$name/stdout.txt" 2>&1
  rc=$?
  echo "rc=$rc seconds=$(( $(date +%s) - start ))"
  tail -c 2500 "$WORK/$name/stdout.txt"
done
tar czf "$FINAL/results.tgz" -C "$WORK" .
ls -la "$FINAL"
