# Installs the Debian packages named in "$@" that are not installed yet (apt-get update once,
# then apt-get install -y), with sudo when not root. Source it, then: debian_packages PKG...
debian_packages() {
    local missing=() package
    for package in "$@"; do
        dpkg -s "$package" >/dev/null 2>&1 || missing+=("$package")
    done
    ((${#missing[@]})) || return 0
    local sudo
    sudo=$( ((EUID == 0)) || echo sudo)
    $sudo apt-get update
    $sudo apt-get install -y "${missing[@]}"
}
