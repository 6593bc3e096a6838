#!/bin/bash
# The Kubernetes manifest dist/kubernetes/vnumad-daemonset.yaml (docs/fleet.md, "KubeVirt"),
# with no cluster:
#   - every document is valid against the Kubernetes API schemas (tests/k8s/validate.js: the
#     JSON schemas of kubernetes-models, and the API types of kubernetes-types through the
#     TypeScript compiler, which refuses a field the API does not have);
#   - the DaemonSet keeps exactly the capabilities of vnumad.service's CapabilityBoundingSet
#     (and of host/privs.c, which keeps them when started otherwise), drops the rest, runs in
#     the host PID namespace, is not privileged, mounts the kubelet's pod directory read-only
#     with HostToContainer propagation and writes only vnumad's state and run directories;
#   - its ConfigMap is a configuration vnumad --check-config accepts (its rules too), and its
#     uri names virt-launcher's virtqemud socket under the pod directory it mounts;
#   - negative controls: a misspelt field, a wrong type, a missing required field and a bad
#     enum value are refused by the validator, and a copy whose capabilities, privileges or
#     pod directory mount differ fails the checks above.
# The npm packages (tests/k8s/package.json, exact versions in package-lock.json) are installed
# by tests/install-deps.sh; exit 77 (skipped, with the reason) only when they cannot be.
set -u
cd "$(dirname "$0")/../.." || exit 1
BUILD=${BUILD:-build}
# shellcheck source=tests/lib/check.sh
. tests/lib/check.sh
manifest=dist/kubernetes/vnumad-daemonset.yaml
unit=dist/systemd/vnumad.service.in
sock_glob='/var/lib/kubelet/pods/*/volumes/kubernetes.io~empty-dir/libvirt-runtime/virtqemud-sock'

command -v node >/dev/null || skip_all "node is not installed (Debian package nodejs; make deps installs it)"
if ! why=$(sh tests/k8s/install.sh 2>&1); then
    skip_all "the npm packages of tests/k8s cannot be installed here: $(echo "$why" | tail -n 1)"
fi
tmp=$(mktemp -d /tmp/vnuma-k8s.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
v() { node tests/k8s/validate.js "$@"; }

# ---- the API schemas ----
v schema "$manifest" >"$tmp/schema" 2>&1
rc=$?
sed 's/^/# /' "$tmp/schema"
ok $rc "every document of $manifest is valid against the Kubernetes API schemas"
kinds=$(sed -n 's/^valid: \([A-Za-z]*\)\/.*/\1/p' "$tmp/schema" | sort | tr '\n' ' ')
[ "$kinds" = "ConfigMap DaemonSet Namespace ServiceAccount " ]
ok $? "it holds a Namespace, a ServiceAccount, a ConfigMap and a DaemonSet ($kinds)"

# negative controls: each broken copy differs from the manifest and is refused, naming the field
refused() { # DESC FILE WORD: the validator refuses FILE and its output names WORD
    local out rc
    if cmp -s "$manifest" "$2"; then
        ok 1 "negative control: $1 (the copy is not broken: the sed matched nothing)"
        return
    fi
    out=$(v schema "$2" 2>&1)
    rc=$?
    [ $rc = 1 ] && grep -q -- "$3" <<<"$out"
    ok $? "negative control: the validator refuses $1 ($(grep -m1 -E "^  (schema|types): .*$3" <<<"$out" | sed 's/^ *//'))"
}
sed '/mountPath: \/var\/lib\/kubelet\/pods/{n;s/readOnly: true/readOnyl: true/}' "$manifest" >"$tmp/typo.yaml"
refused "a misspelt field (readOnyl on the pod directory's mount)" "$tmp/typo.yaml" readOnyl
sed 's/^\( *\)hostPID: true$/\1hostPID: "true"/' "$manifest" >"$tmp/type.yaml"
refused "a wrong type (hostPID a string)" "$tmp/type.yaml" hostPID
sed '/^ *mountPath: \/var\/lib\/kubelet\/pods$/d' "$manifest" >"$tmp/required.yaml"
refused "a missing required field (the pod directory mount's mountPath)" "$tmp/required.yaml" mountPath
sed 's/mountPropagation: HostToContainer/mountPropagation: HostToContianer/' "$manifest" >"$tmp/enum.yaml"
refused "a value outside an enum (mountPropagation)" "$tmp/enum.yaml" mountPropagation

# ---- privileges, against the unit ----
# caps_manifest FILE: the capabilities its vnumad container adds, as CAP_X, sorted
caps_manifest() {
    v facts "$1" | sed -n 's/^container vnumad capabilities.add //p' | tr ' ' '\n' | grep . |
        sed 's/^CAP_//; s/^/CAP_/' | sort | tr '\n' ' '
}
caps_unit=$(sed -n 's/^CapabilityBoundingSet=//p' "$unit" | tr ' ' '\n' | grep . | sort | tr '\n' ' ')
caps_code=$(sed -n '/privs_keep\[\] = {/,/};/p' host/privs.c | grep -o 'CAP_[A-Z_]*' | sort | tr '\n' ' ')
caps=$(caps_manifest "$manifest")
[ -n "$caps_unit" ] && [ "$caps" = "$caps_unit" ] && [ "$caps" = "$caps_code" ]
ok $? "the DaemonSet adds exactly the unit's CapabilityBoundingSet and host/privs.c's list ($caps| unit: $caps_unit| code: $caps_code)"
grep -q '^AmbientCapabilities=' "$unit" && ok 1 "the unit has AmbientCapabilities= now: compare them too"
v facts "$manifest" >"$tmp/facts"
sed 's/^/# /' "$tmp/facts"
grep -qx 'container vnumad capabilities.drop ALL' "$tmp/facts"
ok $? "it drops ALL capabilities first"
sed 's/^\( *\)- SYS_ADMIN$/\1- SYS_BOOT/' "$manifest" >"$tmp/caps.yaml"
! cmp -s "$manifest" "$tmp/caps.yaml" && [ "$(caps_manifest "$tmp/caps.yaml")" != "$caps_unit" ]
ok $? "negative control: a copy with SYS_BOOT for SYS_ADMIN does not match the unit ($(caps_manifest "$tmp/caps.yaml"))"

# privileges FILE: host PID namespace, nothing privileged, no escalation, not the host's network
privileges() {
    local f
    f=$(v facts "$1") || return 1
    grep -qx 'hostPID true' <<<"$f" &&
        ! grep -qE '^(hostNetwork|hostIPC) true$' <<<"$f" &&
        ! grep -qE '^container .* privileged true$' <<<"$f" &&
        grep -qx 'container vnumad privileged false' <<<"$f" &&
        grep -qx 'container vnumad allowPrivilegeEscalation false' <<<"$f" &&
        grep -qx 'container vnumad readOnlyRootFilesystem true' <<<"$f" &&
        grep -qx 'automountServiceAccountToken false' <<<"$f"
}
privileges "$manifest"
ok $? "hostPID true, privileged false, allowPrivilegeEscalation false, read-only root, no host network or IPC, no API token"
sed 's/^\( *\)privileged: false$/\1privileged: true/' "$manifest" >"$tmp/priv.yaml"
! cmp -s "$manifest" "$tmp/priv.yaml" && ! privileges "$tmp/priv.yaml"
ok $? "negative control: a privileged copy fails that check"
grep -qx 'container vnumad command \["nsenter","--cgroup=/proc/1/ns/cgroup","--","/usr/sbin/vnumad","--foreground","--config","/etc/vnuma/vnumad.conf"\]' "$tmp/facts"
ok $? "the container runs vnumad --foreground --config /etc/vnuma/vnumad.conf in the node's cgroup namespace"

# ---- mounts ----
# pods_mount FILE: the kubelet's pod directory, read-only, HostToContainer, from the host's
pods_mount() {
    v facts "$1" | grep -qx 'container vnumad mount /var/lib/kubelet/pods volume=kubelet-pods readOnly=true propagation=HostToContainer source=hostPath:/var/lib/kubelet/pods:Directory'
}
pods_mount "$manifest"
ok $? "the kubelet's pod directory is mounted read-only, HostToContainer, from the node's /var/lib/kubelet/pods"
sed '/mountPath: \/var\/lib\/kubelet\/pods/{n;s/readOnly: true/readOnly: false/}' "$manifest" >"$tmp/rw.yaml"
! cmp -s "$manifest" "$tmp/rw.yaml" && ! pods_mount "$tmp/rw.yaml"
ok $? "negative control: a copy with the pod directory writable fails that check"
grep -qx 'container vnumad mount /sys/fs/cgroup volume=cgroup readOnly=true propagation=None source=hostPath:/sys/fs/cgroup:Directory' "$tmp/facts"
ok $? "the node's cgroup tree is mounted read-only"
grep -qx 'container vnumad mount /etc/vnuma volume=config readOnly=true propagation=None source=configMap:vnumad-config' "$tmp/facts"
ok $? "/etc/vnuma is the ConfigMap, read-only"
writable=$(sed -n 's/^container vnumad mount \([^ ]*\) .* readOnly=false .*/\1/p' "$tmp/facts" | sort | tr '\n' ' ')
[ "$writable" = "/run/vnuma /var/lib/vnuma " ]
ok $? "the only writable mounts are /run/vnuma and /var/lib/vnuma ($writable)"

# ---- the ConfigMap: a configuration vnumad accepts ----
v data "$manifest" vnumad-config vnumad.conf >"$tmp/vnumad.conf" &&
    v data "$manifest" vnumad-config 10-kubevirt.rules >"$tmp/10-kubevirt.rules"
ok $? "the ConfigMap has vnumad.conf and 10-kubevirt.rules"
key() { sed -n "s/^$1 *= *//p" "$tmp/vnumad.conf" | tail -n 1; }
[ "$(key state_dir)" = /var/lib/vnuma ] && [ "$(dirname "$(key socket)")" = /run/vnuma ] &&
    [ "$(key policy_dir)" = /etc/vnuma/policy.d ]
ok $? "its state_dir, socket and policy_dir are the DaemonSet's mounts ($(key state_dir), $(key socket), $(key policy_dir))"
uris=$(sed -n 's/^uri *= *//p' "$tmp/vnumad.conf")
[ "$(wc -l <<<"$uris")" = 1 ] && [ "$uris" = "qemu+unix:///session?socket=$sock_glob" ]
ok $? "its uri is KubeVirt's non-root virt-launcher: a session virtqemud's socket in each pod's libvirt-runtime emptyDir ($uris)"
grep -qx 'container vnumad mount /var/lib/kubelet/pods .*' "$tmp/facts" && case $sock_glob in /var/lib/kubelet/pods/*) true ;; *) false ;; esac
ok $? "the socket glob is under the pod directory the DaemonSet mounts"
[ "$(grep -v '^ *#' "$tmp/10-kubevirt.rules" | grep . | head -n 1)" = "off dedicated" ]
ok $? "the first rule leaves the kubelet's exclusive CPUs alone: off dedicated"

# vnumad --check-config CONF RULES: the ConfigMap's files, with the directories on this host
# put in a scratch directory (a key given twice takes its last value)
checkconf() {
    local d=$tmp/cc.$1
    mkdir -p "$d/policy.d" && chmod 0755 "$d" "$d/policy.d"
    cp "$2" "$d/vnumad.conf" && cp "$3" "$d/policy.d/10-kubevirt.rules"
    printf 'state_dir = %s\nsocket = %s\npolicy_dir = %s\n' "$d/state" "$d/run/vnumad.sock" "$d/policy.d" >>"$d/vnumad.conf"
    chmod 0644 "$d/vnumad.conf" "$d/policy.d/10-kubevirt.rules"
    "$BUILD/vnumad" --check-config --config "$d/vnumad.conf" 2>&1
}
if [ -x "$BUILD/vnumad" ]; then
    out=$(checkconf good "$tmp/vnumad.conf" "$tmp/10-kubevirt.rules")
    rc=$?
    nrules=$(grep -v '^ *#' "$tmp/10-kubevirt.rules" | grep -c .)
    [ $rc = 0 ] && grep -q "default off, $nrules rule(s)" <<<"$out"
    ok $? "vnumad --check-config accepts the ConfigMap's vnumad.conf and its $nrules rule(s) ($(tr '\n' ' ' <<<"$out"))"
    sed 's/^off dedicated$/off dedicatd/' "$tmp/10-kubevirt.rules" >"$tmp/bad.rules"
    out=$(checkconf bad "$tmp/vnumad.conf" "$tmp/bad.rules")
    rc=$?
    ! cmp -s "$tmp/10-kubevirt.rules" "$tmp/bad.rules" && [ $rc != 0 ] && grep -q 'dedicatd' <<<"$out"
    ok $? "negative control: vnumad --check-config refuses a misspelt rule ($(tr '\n' ' ' <<<"$out"))"
else
    ok 1 "vnumad --check-config accepts the ConfigMap ($BUILD/vnumad is not built: make)"
fi

# ---- shipped ----
# (tests/cli/install.sh checks make install's files, tests/cli/deb.sh the package's)
make -s --no-print-directory -n install BUILD="$BUILD" PREFIX=/usr DESTDIR="$tmp/root" 2>/dev/null |
    grep -q "dist/kubernetes/vnumad-daemonset.yaml $tmp/root/usr/share/vnuma/kubernetes/"
ok $? "make install puts it in PREFIX/share/vnuma/kubernetes/"
grep -qx "usr/share/vnuma/kubernetes/vnumad-daemonset.yaml" debian/vnuma.install
ok $? "the vnuma package ships it (debian/vnuma.install: /usr/share/vnuma/kubernetes/)"
finish
