#!/bin/bash
# test_docs.sh - the generated man pages and bash completion (tools/panocap-man)
# against the real panocap: panocap.8 names every option --help prints,
# panocap.conf.5 every key --help-config prints, every page formats without a
# warning (where man is installed), and the completion script, sourced into
# bash, completes options, --algo names (from panocap --list-algos) and keys
# for -s. TAP. Arguments: PANOCAP BUILDDIR/tools
panocap=$1 dir=$2
n=0 failed=0
check() { # check "description" command...
    local what=$1; shift
    n=$((n + 1))
    if "$@" >/dev/null 2>&1; then echo "ok $n - $what"; else echo "not ok $n - $what"; failed=$((failed + 1)); fi
}

# options as --help prints them: "--name" at the start of a usage entry
opts=$("$panocap" --help | grep -oE '^ +(-[A-Za-z], )?--[a-z-]+' | grep -oE -- '--[a-z-]+')
missing=""
for o in $opts; do grep -qF -- "${o//-/\\-}" "$dir/panocap.8" || missing="$missing $o"; done
check "panocap.8 has all $(echo $opts | wc -w) options of --help${missing:+ (missing:$missing)}" test -z "$missing"

keys=$("$panocap" --help-config | grep -oE '^  [a-z_]+ \(' | tr -d ' (' | sort -u)
missing=""
for k in $keys; do grep -qx ".B $k" "$dir/panocap.conf.5" || missing="$missing $k"; done
check "panocap.conf.5 has all $(echo $keys | wc -w) keys of --help-config${missing:+ (missing:$missing)}" test -z "$missing"
check "panocap.conf.5 names the default configuration path" grep -qF "$("$panocap" --help | grep -oE '\(default: [^ ]+' | head -1 | sed 's/(default: //; s/-/\\-/g')" "$dir/panocap.conf.5"

for page in panocap.8 panocap.conf.5 panocap-bench.1 panocap-quality.1 panocap-capture-bench.1 panocap-encode-bench.1 \
    panocap-calibrate.1 panocap-scene.1 panocap-eval.1 panocap-reframe.1; do
    [ -f "$dir/$page" ] || { [ "$page" = panocap-encode-bench.1 ] || [ "$page" = panocap-reframe.1 ] && continue; }
    if command -v man >/dev/null; then
        w=$(LC_ALL=C.UTF-8 MANWIDTH=80 man --warnings -l "$dir/$page" 2>&1 >/dev/null)
        check "$page formats without warnings${w:+: $w}" test -z "$w"
    else
        n=$((n + 1)); echo "ok $n # SKIP man not installed ($page)"
    fi
done

complete_words() { # complete_words WORD... -> COMPREPLY of the last word, one per line
    bash -c 'source "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); _panocap; printf "%s\n" "${COMPREPLY[@]}"' \
        _ "$dir/panocap" "$@"
}
check "completion script parses" bash -n "$dir/panocap"
check "completion: --al -> --algo" grep -qx -- --algo <(complete_words "$panocap" --al)
algos=$("$panocap" --list-algos | awk 'NR > 1 { print $1 }' | sort)
check "completion: --algo '' -> the $(echo $algos | wc -w) algorithms of --list-algos" \
    test "$(complete_words "$panocap" --algo '' | sort)" = "$algos"
check "completion: -s debayer.al -> debayer.algo=" grep -qx debayer.algo= <(complete_words "$panocap" -s debayer.al)
check "completion: --variant '' -> 2px 4px auto" \
    test "$(complete_words "$panocap" --variant '' | sort | tr '\n' ' ')" = "2px 4px auto "
check "completion: -s virtual_cameras[0].pa -> virtual_cameras[0].pan=" \
    grep -qxF 'virtual_cameras[0].pan=' <(complete_words "$panocap" -s 'virtual_cameras[0].pa')
check "completion: -s panorama.ri -> panorama.rig=" grep -qx panorama.rig= <(complete_words "$panocap" -s panorama.ri)
check "completion: --rig FILE completes files" grep -qx "$dir/panocap.8" <(complete_words "$panocap" --rig "$dir/panocap.")
check "completion: --config FILE completes files" grep -qx "$dir/panocap.8" <(complete_words "$panocap" --config "$dir/panocap.")
echo "1..$n"
[ $failed -eq 0 ]
