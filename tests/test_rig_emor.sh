#!/bin/bash
# test_rig_emor.sh - rig/emor_table.c (the EMoR response curves) against a
# new measurement through Hugin's nona by its generator, tools/measure-emor
# --check. TAP; skips where nona, numpy or tifffile are missing (the tool's
# exit status 77). Arguments: TOOLS/measure-emor RIG/emor_table.c
out=$("$1" --check "$2" 2>&1)
rc=$?
if [ $rc -eq 77 ]; then
    echo "1..0 # SKIP ${out#measure-emor: }"
    exit 0
fi
printf '%s\n' "$out" | sed 's/^/# /'
last=$(printf '%s\n' "$out" | tail -1)
if [ $rc -eq 0 ]; then echo "ok 1 - ${last#measure-emor: }"; else echo "not ok 1 - ${last#measure-emor: }"; fi
echo "1..1"
[ $rc -eq 0 ]
