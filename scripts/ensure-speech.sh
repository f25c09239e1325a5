#!/usr/bin/env bash
# The transcript tests (test/transcripts/) speak known sentences with espeak-ng, build one- and two-channel
# recordings with sox (wav and mp3) and recognise them offline with pocketsphinx behind a small
# OpenAI-compatible test server. Install Debian's packages when they are missing and this user may (root
# with apt-get); otherwise say what to do.
set -euo pipefail
model=/usr/share/pocketsphinx/model/en-us/en-us
have_all() {
  command -v pocketsphinx_continuous >/dev/null && [[ -d "$model" ]] && command -v espeak-ng >/dev/null &&
    command -v sox >/dev/null && [[ "$(sox --help-format mp3 2>/dev/null)" == *"Format: mp3"* ]]
}
if have_all; then exit 0; fi
packages=(pocketsphinx pocketsphinx-en-us espeak-ng sox libsox-fmt-mp3)
if [[ "$(id -u)" == "0" ]] && command -v apt-get >/dev/null; then
  echo "Installing Debian's ${packages[*]} for the transcript tests (test/transcripts/)…" >&2
  if ! DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${packages[@]}" >/dev/null; then
    apt-get update >/dev/null
    DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${packages[@]}" >/dev/null
  fi
  if have_all; then exit 0; fi
fi
echo "The transcript tests (test/transcripts/) need pocketsphinx_continuous with the en-us model, espeak-ng" >&2
echo "and sox with mp3 support: install them (Debian/Ubuntu: sudo apt-get install ${packages[*]})." >&2
exit 1
