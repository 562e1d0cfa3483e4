#!/usr/bin/env bash
# What each view costs the dist (a measurement that prints a table, not a
# test; issue 12's "find where the bytes go"). Builds HEAD in a scratch
# worktree again and again, each time with some views' arms of the page
# match (src/ui/mod.rs, `Pages`) drawing a stub instead, so that the linker
# drops everything only those views reach:
#
#   alone    the shell (start-up, connection, sign-in, top bar, Leptos'
#            runtime: every view a stub) plus that view, less the shell;
#   dropped  the whole app less the app without that view: what leaving the
#            view out would save. Code two views share counts to neither, so
#            the dropped column sums to less than the whole.
#
# The export panel (its sources, readers and CSV writer, drawn by the job
# list, the events and the audit trail) is measured the same way, by taking
# `<ExportPanel …/>` out of every page.
#
#   scripts/size-by-view.sh            about 25 release builds, ~1 min each here
#   SIZE_ALONE=0 scripts/size-by-view.sh   the dropped column only
#
# Sizes are wasm + js + css at gzip -9, as scripts/build.sh counts them.
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cd "$SALTSCOPE_REPO"

# label:arm[,arm] — every arm of the page match must be in one view, so a
# new view cannot go unmeasured.
VIEWS=(
  "job list:Jobs" "job page:Job" "minions:Minions,Minion" "functions:Functions,Function"
  "audit trail:Audit" "events and live tail:Events" "fleet status:Fleet" "run comparison:Compare"
  "drift:Drift" "failure patterns:Failures" "SLS rollups:Sls"
)
MOD=src/ui/mod.rs

arms=$(grep -oP 'Some\(Page::\K\w+' "$MOD" | sort -u)
known=$(printf '%s\n' "${VIEWS[@]}" | cut -d: -f2 | tr ',' '\n' | sort -u)
[[ "$arms" == "$known" ]] || die "the page match's arms ($(echo $arms)) are not the views this script knows ($(echo $known)): update VIEWS"

WT=$(mktemp -d "${TMPDIR:-/tmp}/saltscope-size.XXXXXX")
cleanup() { git worktree remove --force "$WT" >/dev/null 2>&1 || rm -rf "$WT"; }
trap cleanup EXIT
git worktree add --quiet --detach "$WT" HEAD
ln -s "$SALTSCOPE_REPO/e2e/node_modules" "$WT/e2e/node_modules"
export CARGO_TARGET_DIR=$SALTSCOPE_WORK/size-target

# stub ARM... : those arms of the page match draw a stub.
stub() {
  local arm
  for arm in "$@"; do
    ARM=$arm perl -0pi -e '
      my $n = s/(Some\(Page::$ENV{ARM}(?:\(\w+\))?\) => )view! \{.*?\}\.into_any\(\),/$1view! { <p>"-"<\/p> }.into_any(),/g;
      die "no arm Page::$ENV{ARM} in src/ui/mod.rs\n" unless $n;' "$WT/$MOD"
  done
}
# no_export: no page draws the export panel.
no_export() {
  local files
  files=$(grep -l '<ExportPanel' "$WT"/src/ui/*.rs)
  [[ -n $files ]] || die "no page draws <ExportPanel>"
  # shellcheck disable=SC2086
  perl -0pi -e 's/<ExportPanel\b.*?\/>//gs' $files
}
reset() { git -C "$WT" checkout --quiet -- src; }
# size: build the worktree, print wasm + js + css gzip -9 in bytes.
size() {
  local out
  out=$( (cd "$WT" && DIST="$WT/dist" scripts/build.sh) 2>&1) || { echo "$out" | tail -20 >&2; die "build failed"; }
  echo "$out" | grep -oP 'wasm \+ js \+ css, gzip -9: \K[0-9]+'
}
all_arms() { printf '%s\n' "${VIEWS[@]}" | cut -d: -f2 | tr ',' ' '; }

log "building HEAD ($(git rev-parse --short HEAD)) in $WT, target $CARGO_TARGET_DIR"
reset; full=$(size); log "whole app: $full B"
# shellcheck disable=SC2046
reset; stub $(all_arms); shell=$(size); log "shell: $shell B"

rows=()
for view in "${VIEWS[@]}"; do
  label=${view%%:*}; mine=${view#*:}; mine=${mine//,/ }
  alone=""
  if [[ ${SIZE_ALONE:-1} != 0 ]]; then
    others=$(all_arms | tr ' ' '\n' | grep -vxF -f <(tr ' ' '\n' <<<"$mine") | tr '\n' ' ')
    # shellcheck disable=SC2086
    reset; stub $others; s=$(size); alone=$(( s - shell ))
  fi
  # shellcheck disable=SC2086
  reset; stub $mine; s=$(size); dropped=$(( full - s ))
  log "$label: alone +$alone, dropped -$dropped"
  rows+=("$label|$alone|$dropped")
done
reset; no_export; s=$(size); export_dropped=$(( full - s ))
reset

kb() { awk -v b="$1" 'BEGIN { if (b == "") print "—"; else printf "%.1f", b / 1000 }'; }
printf '\nwasm + js + css, gzip -9, KB (1 KB = 1,000 B), HEAD %s\n\n' "$(git rev-parse --short HEAD)"
printf '%-24s %10s %10s\n' "view" "alone" "dropped"
for row in "${rows[@]}"; do
  IFS='|' read -r label alone dropped <<<"$row"
  printf '%-24s %10s %10s\n' "$label" "$(kb "$alone")" "$(kb "$dropped")"
done
printf '%-24s %10s %10s\n' "export panel" "—" "$(kb "$export_dropped")"
printf '%-24s %10s\n' "shell (every view a stub)" "$(kb "$shell")"
printf '%-24s %10s\n' "whole app" "$(kb "$full")"
