#!/bin/sh
# Installs demo-agent VERSION for the current user from a release origin:
#   DEMO_AGENT_DOWNLOAD_BASE_URL=http://127.0.0.1:PORT sh install.sh 1.0.0
# Downloads demo-agent-VERSION.tar.gz and SHA256SUMS, verifies the archive, unpacks it
# into ~/.local/share/demo-agent and links ~/.local/bin/demo-agent.
set -eu

version="${1:?usage: install.sh VERSION}"
base="${DEMO_AGENT_DOWNLOAD_BASE_URL:?DEMO_AGENT_DOWNLOAD_BASE_URL must name the release origin}"
archive="demo-agent-$version.tar.gz"
share="$HOME/.local/share/demo-agent"
bin="$HOME/.local/bin"

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT INT TERM

echo "downloading $base/$archive"
curl --fail --silent --show-error --location --retry 2 --output "$tmp/$archive" "$base/$archive"
curl --fail --silent --show-error --location --output "$tmp/SHA256SUMS" "$base/SHA256SUMS"

expected="$(awk -v name="$archive" '{ file = $2; sub(/^\*/, "", file); if (file == name) print $1 }' "$tmp/SHA256SUMS")"
actual="$(sha256sum "$tmp/$archive" | cut -d ' ' -f 1)"
if [ -z "$expected" ]; then
    echo "install.sh: $archive is not listed in SHA256SUMS" >&2
    exit 1
fi
if [ "$expected" != "$actual" ]; then
    echo "install.sh: checksum mismatch for $archive: expected $expected, got $actual" >&2
    exit 1
fi

mkdir -p "$share" "$bin"
rm -rf "$share/demo-agent-$version"
tar -xzf "$tmp/$archive" -C "$share"
chmod 755 "$share/demo-agent-$version/demo_agent.py"
ln -sfn "$share/demo-agent-$version/demo_agent.py" "$bin/demo-agent"
echo "installed demo-agent $version into $bin/demo-agent"
