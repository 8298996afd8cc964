#!/usr/bin/env bash
# Builds the real Dockerfile and runs the image for real, with podman, on a machine that cannot
# pull from an image registry. The official Node image is replaced by a stand-in made from this
# machine's own node, npm and a static busybox, at the official image's paths (NODE_IMAGE=... to
# use a real base instead). Checks /health through a published port, a proxied request, the
# non-root user, the HEALTHCHECK, SIGHUP reload and SIGTERM drain with exit 0 (podman stop), then
# prints the image size and removes everything it made.
#
# Needs: podman, runc, busybox-static (apt-get install -y podman runc busybox-static), root.
# NODE_EXTRA_CA_CERTS, when set, is handed to the build as the npm_ca secret (a TLS-intercepting
# proxy's CA for npm ci); unset, the build uses Node's own CAs.
set -euo pipefail
cd "$(dirname "$0")/.."

# runc and cgroupfs: crun refuses some cgroup layouts; the ulimits keep runc within the
# machine's own limits.
PODMAN=(podman --runtime runc --cgroup-manager=cgroupfs)
LIMITS=(--ulimit nofile=1024:1024 --ulimit nproc=1024:1024)
id=$$
image=localhost/portico-image-test:$id
base_tag=localhost/portico-node-standin:$id
backend=portico-test-backend-$id
gateway=portico-test-gateway-$id
work=$(mktemp -d)
made_base=
started=$(date +%s)

cleanup() {
  local rc=$?
  "${PODMAN[@]}" rm -f -t 0 "$gateway" "$backend" >/dev/null 2>&1 || true
  "${PODMAN[@]}" rmi -f "$image" >/dev/null 2>&1 || true
  [ -n "$made_base" ] && { "${PODMAN[@]}" rmi -f "$base_tag" >/dev/null 2>&1 || true; }
  rm -rf "$work"
  exit "$rc"
}
trap cleanup EXIT

fail() {
  echo "test-image: FAIL: $*" >&2
  "${PODMAN[@]}" logs "$gateway" 2>&1 | tail -n 20 >&2 || true
  exit 1
}
step() { echo "test-image: $*"; }
# The whole log is read before grep sees it: with pipefail, `podman logs | grep -q` fails when grep
# exits at its first match and podman logs is still writing (SIGPIPE).
logs_have() {
  local out
  out=$("${PODMAN[@]}" logs "$1" 2>&1) || return 1
  grep -qF -- "$2" <<<"$out"
}

# 1. The stand-in base image: node, the libraries it links, npm, busybox for /bin/sh and
# /usr/bin/env, and a node user (uid 1000) as in the official image.
if [ -n "${NODE_IMAGE:-}" ]; then
  base_tag=$NODE_IMAGE
else
  step "building the stand-in base image $base_tag"
  root=$work/rootfs
  node_bin=$(readlink -f "$(command -v node)")
  npm_dir=$(npm root -g)/npm
  mkdir -p "$root"/usr/local/bin "$root"/usr/local/lib/node_modules "$root"/bin "$root"/usr/bin \
    "$root"/etc "$root"/tmp "$root"/home/node "$root"/root "$root"/run
  cp "$node_bin" "$root"/usr/local/bin/node
  for lib in $(ldd "$node_bin" | awk '$2 == "=>" && $3 ~ /^\// { print $3 } $1 ~ /^\// { print $1 }'); do
    cp -L --parents "$lib" "$root"
  done
  cp -a "$npm_dir" "$root"/usr/local/lib/node_modules/npm
  ln -s ../lib/node_modules/npm/bin/npm-cli.js "$root"/usr/local/bin/npm
  ln -s ../lib/node_modules/npm/bin/npx-cli.js "$root"/usr/local/bin/npx
  cp "$(command -v busybox)" "$root"/bin/busybox
  ln -s busybox "$root"/bin/sh
  ln -s /bin/busybox "$root"/usr/bin/env
  printf 'root:x:0:0:root:/root:/bin/sh\nnode:x:1000:1000::/home/node:/bin/sh\n' >"$root"/etc/passwd
  printf 'root:x:0:\nnode:x:1000:\n' >"$root"/etc/group
  chmod 1777 "$root"/tmp
  chown 1000:1000 "$root"/home/node
  tar -C "$root" -c . | "${PODMAN[@]}" import \
    --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
    --change 'CMD ["node"]' - "$base_tag" >/dev/null 2>&1
  made_base=1
fi

# 2. The real Dockerfile. --format docker keeps the HEALTHCHECK (the OCI format has none).
step "building the Dockerfile on $base_tag"
secret=()
if [ -n "${NODE_EXTRA_CA_CERTS:-}" ]; then secret=(--secret "id=npm_ca,src=$NODE_EXTRA_CA_CERTS"); fi
# --layers=false: no intermediate images are kept, so cleanup has only the two tags to remove.
"${PODMAN[@]}" build --format docker --network host --layers=false "${LIMITS[@]}" "${secret[@]}" \
  --build-arg "NODE_IMAGE=$base_tag" -t "$image" . >"$work/build.log" 2>&1 \
  || { tail -n 40 "$work/build.log" >&2; fail "podman build"; }

# 3. Run it: a backend container owns the network namespace and publishes the gateway's port on
# 127.0.0.1; the gateway joins that namespace, so the backend is 127.0.0.1:9000 to it.
mkdir -p "$work/config" "$work/backend"
cat >"$work/backend/server.mjs" <<'JS'
import { createServer } from 'node:http';
// /slow answers after SLOW_MS, long enough to be in flight when the gateway is stopped.
const SLOW_MS = 2000;
createServer((req, res) => {
  if (req.url === '/slow') {
    console.log('slow request received');
    setTimeout(() => res.end('{"slow":"done"}'), SLOW_MS);
    return;
  }
  res.setHeader('content-type', 'application/json');
  res.end(JSON.stringify({ backend: 'ok', path: req.url }));
}).listen(9000, '127.0.0.1', () => console.log('backend listening'));
JS
write_config() {
  # $1: an extra route's path, or nothing. Written in place so the bind mount sees the change.
  {
    printf 'routes:\n'
    printf '  - { method: GET, route: /hello, service: 127.0.0.1:9000, path: /hello, public: true }\n'
    printf '  - { method: GET, route: /slow, service: 127.0.0.1:9000, path: /slow, public: true }\n'
    if [ -n "${1:-}" ]; then printf '  - { method: GET, route: %s, service: 127.0.0.1:9000, path: %s, public: true }\n' "$1" "$1"; fi
  } >"$work/config/gateway.yaml"
}
write_config
chmod -R a+rX "$work"

"${PODMAN[@]}" run -d --name "$backend" "${LIMITS[@]}" -p 127.0.0.1::8080 \
  -v "$work/backend:/backend:ro" --entrypoint node "$base_tag" /backend/server.mjs >/dev/null
# --health-interval disable: the periodic check needs systemd timers; the check itself is run below.
"${PODMAN[@]}" run -d --name "$gateway" "${LIMITS[@]}" --network "container:$backend" --health-interval disable \
  --read-only --cap-drop ALL --security-opt no-new-privileges \
  -v "$work/config:/etc/portico:ro" "$image" >/dev/null
host_port=$("${PODMAN[@]}" port "$backend" 8080/tcp | sed 's/.*://')
base_url="http://127.0.0.1:$host_port"
step "gateway container $gateway, published at $base_url"

# Waits (bounded) until GET $1 answers $2.
wait_status() {
  local url=$1 want=$2 got=
  for _ in $(seq 1 100); do
    got=$(curl -s -o /dev/null -w '%{http_code}' --max-time 2 "$url" || true)
    [ "$got" = "$want" ] && return 0
    sleep 0.2
  done
  fail "GET $url answered ${got:-nothing}, expected $want"
}

wait_status "$base_url/health" 200
[ "$(curl -s "$base_url/health")" = '{"status":"ok"}' ] || fail "/health body"
step "ok: /health through the published port"

body=$(curl -s --max-time 5 "$base_url/api/hello")
[ "$body" = '{"backend":"ok","path":"/hello"}' ] || fail "proxied request answered: $body"
step "ok: proxied request: $body"

uid=$("${PODMAN[@]}" exec "$gateway" node -e "process.stdout.write(/^Uid:\\s+(\\d+)/m.exec(require('fs').readFileSync('/proc/1/status','utf8'))[1])")
[ "$uid" != 0 ] || fail "the gateway runs as root"
user=$("${PODMAN[@]}" image inspect --format '{{.Config.User}}' "$image")
[ "$user" = node ] || fail "image user is '$user', expected node"
step "ok: PID 1 runs as uid $uid (user $user), read-only root filesystem, no capabilities"

"${PODMAN[@]}" healthcheck run "$gateway" || fail "HEALTHCHECK command failed"
step "ok: HEALTHCHECK passes"

wait_status "$base_url/api/added" 404
write_config /added
"${PODMAN[@]}" kill -s HUP "$gateway" >/dev/null
wait_status "$base_url/api/added" 200
step "ok: SIGHUP reloaded the configuration (/api/added now served)"

# Drain: a request in flight when podman stop sends SIGTERM still gets its full answer, and the
# container exits 0.
curl -s --max-time 30 -o "$work/slow.out" -w '%{http_code}' "$base_url/api/slow" >"$work/slow.status" &
slow_pid=$!
for _ in $(seq 1 100); do
  logs_have "$backend" 'slow request received' && break
  sleep 0.1
done
logs_have "$backend" 'slow request received' || fail "the slow request never reached the backend"
"${PODMAN[@]}" stop -t 30 "$gateway" >/dev/null
wait "$slow_pid" || true
[ "$(cat "$work/slow.status")" = 200 ] && [ "$(cat "$work/slow.out")" = '{"slow":"done"}' ] \
  || fail "in-flight request during stop: status $(cat "$work/slow.status"), body $(cat "$work/slow.out")"
code=$("${PODMAN[@]}" inspect --format '{{.State.ExitCode}}' "$gateway")
[ "$code" = 0 ] || fail "gateway exited $code after podman stop, expected 0"
logs_have "$gateway" '"msg":"draining' || fail "no drain in the gateway log"
step "ok: podman stop (SIGTERM) drained the in-flight request and exited 0"

size=$("${PODMAN[@]}" image inspect --format '{{.Size}}' "$image")
base_size=$("${PODMAN[@]}" image inspect --format '{{.Size}}' "$base_tag")
step "image size: $((size / 1000000)) MB ($size bytes), of which the base $base_tag is $((base_size / 1000000)) MB"
step "passed in $(( $(date +%s) - started )) s"
