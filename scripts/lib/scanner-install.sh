#!/usr/bin/env bash
# Installs n8n's community-package scanner, pinned, cached under $CACHE: @n8n/scan-community-package
# with --legacy-peer-deps (its peers do not resolve together), TypeScript 5.x and n8n-workflow beside
# it, as issue 26 found it runs. Prints the directory; `require(<dir>/node_modules/@n8n/scan-community-package)`
# gives analyzePackage(dir).
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
ver=0.32.0
dir="$CACHE/scanner-$ver"
if [ ! -f "$dir/.installed" ]; then
  log "installing @n8n/scan-community-package $ver into $dir (first run only)"
  rm -rf "$dir"; mkdir -p "$dir"; cd "$dir"
  echo '{"name":"scanner-host","private":true}' > package.json
  npm install --legacy-peer-deps --ignore-scripts --no-audit --no-fund --loglevel=error \
    "@n8n/scan-community-package@$ver" "typescript@5.9.3" "n8n-workflow@2.41.0" >&2 \
    || die "could not install @n8n/scan-community-package $ver"
  [ -d node_modules/@n8n/scan-community-package ] || die "scanner missing after install in $dir"
  touch .installed
fi
echo "$dir"
