# Sourced by the CI scripts (.ci/run, tools/*.sh) that install system packages: root is not
# assumed. A command that needs root runs directly as root, else through `sudo -n` (never a
# password prompt); when neither is possible the caller skips what needed it, with a note.
#
#   . tools/as_root.sh
#   apt_install WHO "WHAT IS SKIPPED" PKG...  || exit 0     # installed, or a note and status 1
#   as_root dpkg --add-architecture arm64                   # status 1 when root is out of reach

# Whether this process can act as root: it is root, or sudo runs without a password.
can_be_root() {
    [ "$(id -u)" = 0 ] || { command -v sudo >/dev/null && sudo -n true 2>/dev/null; }
}

as_root() {
    if [ "$(id -u)" = 0 ]; then
        "$@"
    elif command -v sudo >/dev/null; then
        sudo -n "$@"
    else
        return 1
    fi
}

# apt_install WHO SKIPS PKG...: installs Debian packages with apt-get (options such as
# --no-install-recommends may be among PKG). When it cannot (no apt-get, not root and no
# passwordless sudo, or the install fails), prints "WHO: cannot install PKG (why); SKIPS" on
# stderr and returns 1. apt runs without the caller's TMPDIR (.ci/run's private folder, which
# apt's unprivileged _apt user cannot enter).
apt_install() {
    local who=$1 skips=$2 why arg
    shift 2
    if ! command -v apt-get >/dev/null; then
        why="no apt-get"
    elif ! can_be_root; then
        why="not root, and sudo -n is not allowed"
    elif ! { as_root env -u TMPDIR apt-get update -qq &&
        as_root env -u TMPDIR DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >/dev/null; }; then
        why="apt-get install failed"
    else
        return 0
    fi
    local pkgs=()
    for arg in "$@"; do [[ $arg == -* ]] || pkgs+=("$arg"); done
    echo "$who: cannot install ${pkgs[*]} ($why); $skips" >&2
    return 1
}
