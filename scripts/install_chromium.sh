#!/usr/bin/env bash
# Install Debian's Chromium (and a CJK font for readable screenshots) for the browser tests.
# Idempotent; never downloads a Playwright browser.
set -euo pipefail
PACKAGES=(chromium fonts-wqy-zenhei)
missing=()
for package in "${PACKAGES[@]}"; do
  dpkg -s "$package" >/dev/null 2>&1 || missing+=("$package")
done
if command -v chromium >/dev/null 2>&1 && [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi
SUDO=""
if [ "$(id -u)" -ne 0 ] && command -v sudo >/dev/null 2>&1; then SUDO="sudo"; fi
$SUDO apt-get update
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y --no-install-recommends "${missing[@]:-chromium}"
