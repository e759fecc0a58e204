#!/bin/sh
# Installs the penguin binary of a GitHub release:
#
#   curl -fsSL https://github.com/penguin-dev/penguin/releases/latest/download/install.sh | sh
#
# Detects the OS and CPU (Linux or macOS, x86_64 or arm64), downloads
# <base>/v<version>/penguin-<target> and <base>/v<version>/SHA256SUMS with curl
# or wget, checks the binary's SHA-256 against SHA256SUMS (sha256sum or
# shasum -a 256), and only then moves it into place, atomically:
# ${PENGUIN_INSTALL_DIR:-$HOME/.local/bin}/penguin. On any failure it prints one
# line, exits 1 and leaves nothing behind.
#
# Settings (environment):
#   PENGUIN_VERSION        the release to install, e.g. 0.1.0 (default: the latest)
#   PENGUIN_INSTALL_DIR    where to put `penguin` (default: $HOME/.local/bin)
#   PENGUIN_DOWNLOAD_BASE  where releases live (default: the GitHub releases download
#                          URL, https://github.com/$REPO/releases/download)
#
# The latest version is the last path segment of the URL that
# ${PENGUIN_DOWNLOAD_BASE%/download}/latest redirects to: GitHub sends
# .../releases/latest to .../releases/tag/v<version>. No GitHub API call is made.
set -eu

# The project's GitHub owner/name (placeholder until the repository is published).
REPO="penguin-dev/penguin"

err() {
	printf 'penguin install: error: %s\n' "$1" >&2
	exit 1
}

say() {
	printf 'penguin install: %s\n' "$1" >&2
}

# Files to remove when the script ends, however it ends.
TMP_FILE=""
TMP_DIR=""
cleanup() {
	if [ -n "$TMP_FILE" ]; then rm -f "$TMP_FILE"; fi
	if [ -n "$TMP_DIR" ]; then rm -rf "$TMP_DIR"; fi
}

detect_target() {
	os=$(uname -s 2>/dev/null || echo unknown)
	arch=$(uname -m 2>/dev/null || echo unknown)
	case "$os" in
	Linux) os_part=unknown-linux-gnu ;;
	Darwin)
		os_part=apple-darwin
		# An x86_64 shell under Rosetta on Apple silicon: take the native binary.
		if [ "$arch" = x86_64 ] && [ "$(sysctl -n sysctl.proc_translated 2>/dev/null || echo 0)" = 1 ]; then
			arch=arm64
		fi
		;;
	*) err "unsupported platform: $os $arch (penguin is released for Linux and macOS on x86_64 and arm64)" ;;
	esac
	case "$arch" in
	x86_64 | amd64) arch_part=x86_64 ;;
	aarch64 | arm64) arch_part=aarch64 ;;
	*) err "unsupported platform: $os $arch (penguin is released for Linux and macOS on x86_64 and arm64)" ;;
	esac
	echo "$arch_part-$os_part"
}

pick_fetcher() {
	if command -v curl >/dev/null 2>&1; then
		echo curl
	elif command -v wget >/dev/null 2>&1; then
		echo wget
	else
		err "neither curl nor wget is installed; install one of them and run this again"
	fi
}

# download URL DEST: the body of URL into DEST; non-zero on any failure (HTTP error, cut connection).
download() {
	case "$1" in
	https://*)
		if [ "$FETCHER" = curl ]; then
			curl -fsSL --proto '=https' --proto-redir '=https' -o "$2" "$1"
		else
			wget -q --https-only -O "$2" "$1"
		fi
		;;
	*)
		if [ "$FETCHER" = curl ]; then
			curl -fsSL -o "$2" "$1"
		else
			wget -q -O "$2" "$1"
		fi
		;;
	esac
}

# final_url URL: the URL that URL redirects to (URL itself when it does not).
final_url() {
	if [ "$FETCHER" = curl ]; then
		curl -fsSL -o /dev/null -w '%{url_effective}' "$1"
	else
		wget -S -O /dev/null "$1" 2>&1 | sed -n 's/^ *Location: *\([^ ]*\).*$/\1/p' | tr -d '\r' | tail -n 1
	fi
}

latest_version() {
	releases="${BASE%/download}"
	url=$(final_url "$releases/latest") || err "could not find the latest release at $releases/latest (set PENGUIN_VERSION)"
	tag=${url%/}
	tag=${tag##*/}
	case "$tag" in
	v[0-9]*) echo "${tag#v}" ;;
	*) err "could not find the latest release at $releases/latest: it led to $url, not to a v<version> tag (set PENGUIN_VERSION)" ;;
	esac
}

sha256_of() {
	if command -v sha256sum >/dev/null 2>&1; then
		sha256sum "$1" | awk '{print $1}'
	elif command -v shasum >/dev/null 2>&1; then
		shasum -a 256 "$1" | awk '{print $1}'
	else
		err "neither sha256sum nor shasum is installed, so the download cannot be verified"
	fi
}

main() {
	BASE="${PENGUIN_DOWNLOAD_BASE:-https://github.com/$REPO/releases/download}"
	BASE="${BASE%/}"
	DIR="${PENGUIN_INSTALL_DIR:-${HOME:?HOME is not set; set PENGUIN_INSTALL_DIR}/.local/bin}"
	target=$(detect_target)
	FETCHER=$(pick_fetcher)
	version="${PENGUIN_VERSION:-}"
	if [ -z "$version" ]; then version=$(latest_version); fi
	version="${version#v}"
	case "$version" in
	*[!0-9A-Za-z.+-]* | "") err "PENGUIN_VERSION must look like 0.1.0, not \"$version\"" ;;
	esac
	asset="penguin-$target"
	release="$BASE/v$version"

	if ! mkdir -p "$DIR" 2>/dev/null || ! [ -d "$DIR" ] || ! [ -w "$DIR" ]; then
		err "cannot write to the install directory $DIR (set PENGUIN_INSTALL_DIR to a directory you can write)"
	fi

	if [ -d "$DIR/penguin" ]; then
		err "$DIR/penguin is a directory; remove it or set PENGUIN_INSTALL_DIR"
	fi

	trap cleanup EXIT
	trap 'exit 1' HUP INT TERM
	TMP_DIR=$(mktemp -d "${TMPDIR:-/tmp}/penguin-install.XXXXXX") || err "cannot create a temporary directory"

	say "installing penguin $version for $target from $release"
	download "$release/SHA256SUMS" "$TMP_DIR/SHA256SUMS" ||
		err "download failed: $release/SHA256SUMS (is $version a released version?)"
	expected=$(awk -v f="$asset" '$2 == f || $2 == "*" f { print $1; exit }' "$TMP_DIR/SHA256SUMS")
	if [ -z "$expected" ]; then
		err "release v$version has no $asset: there is no penguin binary for $target in $release/SHA256SUMS"
	fi

	# Downloaded next to its final place, so the last step is one rename on the same file system.
	TMP_FILE=$(mktemp "$DIR/.penguin-install.XXXXXX") ||
		err "cannot write to the install directory $DIR (set PENGUIN_INSTALL_DIR to a directory you can write)"
	download "$release/$asset" "$TMP_FILE" || err "download failed: $release/$asset"
	actual=$(sha256_of "$TMP_FILE")
	if [ "$actual" != "$expected" ]; then
		err "checksum mismatch for $asset: SHA256SUMS says $expected, the download is $actual; nothing was installed"
	fi
	chmod 755 "$TMP_FILE"
	mv -f "$TMP_FILE" "$DIR/penguin" || err "cannot move penguin into $DIR"
	TMP_FILE=""

	say "installed penguin $version ($target) to $DIR/penguin"
	case ":${PATH:-}:" in
	*":$DIR:"*) ;;
	*) say "$DIR is not on your PATH; add it, e.g.: export PATH=\"$DIR:\$PATH\"" ;;
	esac
}

main "$@"
