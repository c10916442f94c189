#!/usr/bin/env bash
# Debian's Chromium for the editor's browser test and the README screenshots (driven by
# puppeteer-core; nothing is downloaded from elsewhere). Prints the binary's path.
set -euo pipefail
if ! command -v chromium >/dev/null 2>&1; then
  echo "[browser-install.sh] installing Debian's chromium" >&2
  if [ "$(id -u)" = 0 ]; then apt-get install -y chromium >&2; else sudo apt-get install -y chromium >&2; fi
fi
command -v chromium || { echo "[browser-install.sh] chromium is missing and could not be installed" >&2; exit 1; }
