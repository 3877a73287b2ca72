#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# scripts/image.sh - assemble the cueue-controller container image from
# the release binary and this machine's Debian packages, with no daemon
# and no registry (`make image`, `make image-rootfs`).
#
#   scripts/image.sh rootfs BINARY OUTDIR
#       OUTDIR/rootfs: the binary at /usr/local/bin/cueue-controller,
#       exactly the shared objects it loads (ldd), the CA bundle, passwd
#       and group with the user nonroot (65532), nsswitch.conf,
#       /etc/os-release, the copyright file and dpkg status entry of every
#       package a file came from (for licence and vulnerability scanners),
#       the mount point of the ledger (/var/lib/cueue, owned by 65532) and
#       of /tmp, and /manager (a link to the binary: Kueue's Deployment
#       runs /manager). No shell, no package manager.
#   scripts/image.sh source [URL]
#       the image's source label: URL (a git remote's, of any form) as an
#       https URL without credentials or ".git", or, without URL, that of
#       this clone's remote (the current branch's, else origin, else the
#       first); nothing when there is none
#   scripts/image.sh image BINARY OUTDIR
#       the rootfs, then with umoci (OCI layout, one layer, config) and
#       skopeo (archives): OUTDIR/cueue-controller-oci.tar (oci-archive),
#       OUTDIR/cueue-controller-docker.tar (docker-archive, for
#       `docker load` and `kind load image-archive`), OUTDIR/oci (the
#       layout), OUTDIR/digest (the manifest's sha256 digest) and
#       OUTDIR/image-ref (the name the docker archive carries).
#
# Environment: VERSION, REVISION (git commit; default HEAD's), SOURCE
# (repository URL; default: `source` above, the label left out when
# there is none),
# IMAGE (name:tag of the docker archive, default cueue-controller:VERSION),
# SOURCE_DATE_EPOCH (timestamps of files and image; default: the commit's
# time, so that two builds of one commit give one digest).
set -eu

# A git remote's URL as the https URL of its repository: scp-like and
# ssh:// forms turned into https, user and password dropped, ".git" cut;
# empty for what is not a network URL (a local path).
source_url() {
	printf '%s\n' "$1" | sed -E \
	    -e 's#^[^@/:]+@([^:/]+):#https://\1/#' \
	    -e 's#^(ssh|git|git\+ssh)://([^@/]+@)?([^/:]+)(:[0-9]+)?/#https://\3/#' \
	    -e 's#^(https?)://[^@/]+@#\1://#' \
	    -e 's#/+$##' -e 's#\.git$##' |
	    grep -E '^https?://[^/]+/.+' || true
}

# The remote this clone's branch tracks, else origin, else the first.
git_source() {
	b=$(git symbolic-ref --short -q HEAD 2>/dev/null || true)
	r=""
	[ -n "$b" ] && r=$(git config "branch.$b.remote" 2>/dev/null || true)
	[ -n "$r" ] || r=$(git remote 2>/dev/null | grep -x origin || true)
	[ -n "$r" ] || r=$(git remote 2>/dev/null | head -n 1)
	[ -n "$r" ] || return 0
	source_url "$(git remote get-url "$r" 2>/dev/null || true)"
}

if [ "${1:-}" = source ]; then
	if [ $# -ge 2 ]; then source_url "$2"; else git_source; fi
	exit 0
fi

mode=${1:?usage: scripts/image.sh rootfs|image BINARY OUTDIR | source [URL]}
bin=${2:?binary}
out=${3:?output directory}
: "${VERSION:?}"
REVISION=${REVISION:-$(git rev-parse HEAD 2>/dev/null || echo unknown)}
if [ -z "${SOURCE:-}" ] || [ "$SOURCE" = unknown ]; then
	SOURCE=$(git_source)
fi
IMAGE=${IMAGE:-cueue-controller:$VERSION}
if [ -z "${SOURCE_DATE_EPOCH:-}" ]; then
	SOURCE_DATE_EPOCH=$(git log -1 --format=%ct 2>/dev/null || echo 0)
fi
export SOURCE_DATE_EPOCH
UID_RUN=65532
umask 022

root=$out/rootfs

# copy_path ABS: ABS into $root as it is on this machine: every symlink
# on the way (/lib -> usr/lib, libfoo.so.1 -> libfoo.so.1.2.3) becomes the
# same symlink, the file at the end is copied. Prints the real path.
copy_path() {
	rest=${1#/}
	cur=""
	while [ -n "$rest" ]; do
		comp=${rest%%/*}
		case $rest in */*) rest=${rest#*/} ;; *) rest="" ;; esac
		cur="$cur/$comp"
		if [ -L "$cur" ]; then
			t=$(readlink "$cur")
			[ -L "$root$cur" ] || ln -s "$t" "$root$cur"
			case $t in /*) ;; *) t=$(dirname "$cur")/$t ;; esac
			copy_path "$(realpath -s -m "$t${rest:+/$rest}")"
			return
		elif [ -d "$cur" ]; then
			mkdir -p "$root$cur"
		else
			cp "$cur" "$root$cur"
			chmod go-w,u+w "$root$cur"
			echo "$cur"
		fi
	done
}

# owner_pkg PATH...: the Debian package that installed the first of the
# paths dpkg knows (merged /usr: a file is recorded under /lib or /usr/lib).
owner_pkg() {
	for p in "$@"; do
		for q in "$p" "/usr$p" "${p#/usr}"; do
			pk=$(dpkg-query -S "$q" 2>/dev/null | sed -n '1s/:.*//p') || true
			if [ -n "$pk" ]; then
				echo "$pk"
				return
			fi
		done
	done
	echo "image.sh: no Debian package owns $1" >&2
	exit 1
}

make_rootfs() {
	[ -x "$bin" ] || {
		echo "image.sh: $bin is not an executable" >&2
		exit 1
	}
	rm -rf "$root"
	mkdir -p "$root/usr/local/bin" "$root/etc/ssl/certs" \
	    "$root/var/lib/cueue" "$root/var/lib/dpkg/status.d" "$root/tmp" \
	    "$root/usr/share/doc"
	install -m 0755 "$bin" "$root/usr/local/bin/cueue-controller"
	# Kueue's Deployment runs /manager: the same program.
	ln -s usr/local/bin/cueue-controller "$root/manager"
	pkgs=""
	# The dynamic loader and every library, as this machine resolves
	# them for this binary.
	libs=$(ldd "$bin" | awk '$2 == "=>" && $3 ~ /^\// { print $3 }
	    $1 ~ /^\// { print $1 }')
	[ -n "$libs" ] || {
		echo "image.sh: ldd found no libraries in $bin" >&2
		exit 1
	}
	for l in $libs; do
		real=$(copy_path "$l")
		pkgs="$pkgs $(owner_pkg "$l" "$real")"
	done
	# update-ca-certificates writes the bundle from the ca-certificates
	# package's certificates.
	[ -f /etc/ssl/certs/ca-certificates.crt ] || {
		echo "image.sh: /etc/ssl/certs/ca-certificates.crt missing (apt-get install ca-certificates)" >&2
		exit 1
	}
	cp /etc/ssl/certs/ca-certificates.crt "$root/etc/ssl/certs/"
	pkgs="$pkgs ca-certificates"
	copy_path /etc/os-release >/dev/null
	pkgs="$pkgs $(owner_pkg "$(realpath /etc/os-release)")"
	chmod 0644 "$root/etc/ssl/certs/ca-certificates.crt"
	printf 'root:x:0:0:root:/root:/sbin/nologin\nnonroot:x:%d:%d:nonroot:/var/lib/cueue:/sbin/nologin\n' \
	    $UID_RUN $UID_RUN >"$root/etc/passwd"
	printf 'root:x:0:\nnonroot:x:%d:\n' $UID_RUN >"$root/etc/group"
	# /etc/hosts (the kubelet's) before DNS; glibc has both built in.
	printf 'passwd: files\ngroup: files\nhosts: files dns\n' \
	    >"$root/etc/nsswitch.conf"
	# The packages the files came from, for scanners (as distroless
	# images record them) and for the licences.
	for p in $(echo "$pkgs" | tr ' ' '\n' | sort -u); do
		dpkg-query -s "$p" >"$root/var/lib/dpkg/status.d/$p"
		if [ -f "/usr/share/doc/$p/copyright" ]; then
			mkdir -p "$root/usr/share/doc/$p"
			cp "/usr/share/doc/$p/copyright" "$root/usr/share/doc/$p/"
		fi
	done
	mkdir -p "$root/usr/share/doc/cueue"
	cp LICENSE "$root/usr/share/doc/cueue/copyright"
	# Mount points. The ledger directory is the only place the runtime
	# user may write; /tmp is an emptyDir in the Deployment.
	chmod 0755 "$root/tmp" "$root/var/lib/cueue"
	find "$root" -exec touch -h -d "@$SOURCE_DATE_EPOCH" {} +
}

make_image() {
	make_rootfs
	layout=$out/oci
	tag=$VERSION
	stamp=$(date -u -d "@$SOURCE_DATE_EPOCH" +%Y-%m-%dT%H:%M:%SZ)
	rm -rf "$layout" "$out/layer.tar" "$out/cueue-controller-oci.tar" \
	    "$out/cueue-controller-docker.tar" "$out/digest" "$out/image-ref"
	# One layer written by GNU tar: sorted, fixed times, every file
	# root's except the ledger directory (no root needed to build).
	tarflags="--format=gnu --sort=name --mtime=@$SOURCE_DATE_EPOCH --numeric-owner"
	# shellcheck disable=SC2086
	tar --create $tarflags --owner=0 --group=0 --file "$out/layer.tar" \
	    --directory "$root" --exclude=./var/lib/cueue .
	# shellcheck disable=SC2086
	tar --append $tarflags --owner=$UID_RUN --group=$UID_RUN \
	    --file "$out/layer.tar" --directory "$root" ./var/lib/cueue
	umoci init --layout "$layout"
	umoci new --image "$layout:$tag"
	umoci raw add-layer --image "$layout:$tag" \
	    --history.created "$stamp" \
	    --history.created_by "scripts/image.sh (cueue $VERSION)" \
	    "$out/layer.tar"
	umoci config --image "$layout:$tag" --no-history \
	    --created "$stamp" --os linux \
	    --architecture "$(dpkg --print-architecture)" \
	    --config.user "$UID_RUN:$UID_RUN" \
	    --config.entrypoint /usr/local/bin/cueue-controller \
	    --config.workingdir / \
	    --config.env PATH=/usr/local/bin \
	    --config.env SSL_CERT_FILE=/etc/ssl/certs/ca-certificates.crt \
	    --config.exposedports 9443/tcp --config.exposedports 8443/tcp \
	    --config.exposedports 8081/tcp --config.exposedports 8082/tcp \
	    --config.volume /var/lib/cueue \
	    --config.label "org.opencontainers.image.title=cueue-controller" \
	    --config.label "org.opencontainers.image.description=Kueue-compatible job-queueing controller" \
	    --config.label "org.opencontainers.image.version=$VERSION" \
	    --config.label "org.opencontainers.image.revision=$REVISION" \
	    ${SOURCE:+--config.label "org.opencontainers.image.source=$SOURCE"} \
	    --config.label "org.opencontainers.image.licenses=Apache-2.0" \
	    --config.label "org.opencontainers.image.created=$stamp" \
	    --manifest.annotation "org.opencontainers.image.version=$VERSION" \
	    --manifest.annotation "org.opencontainers.image.revision=$REVISION" \
	    ${SOURCE:+--manifest.annotation "org.opencontainers.image.source=$SOURCE"}
	[ -n "$SOURCE" ] || echo "image.sh: this clone has no network git remote:" \
	    "label org.opencontainers.image.source left out (SOURCE=URL sets it)" >&2
	umoci gc --layout "$layout"
	rm -f "$out/layer.tar"
	# skopeo writes both archives from the layout (the policy only
	# matters for pulls from registries: nothing is pulled here).
	skopeo --insecure-policy copy -q "oci:$layout:$tag" \
	    "oci-archive:$out/cueue-controller-oci.tar:$tag"
	skopeo --insecure-policy copy -q "oci:$layout:$tag" \
	    "docker-archive:$out/cueue-controller-docker.tar:$IMAGE"
	skopeo inspect --raw "oci:$layout:$tag" | sha256sum |
	    sed 's/^\([0-9a-f]*\).*/sha256:\1/' >"$out/digest"
	echo "$IMAGE" >"$out/image-ref"
	echo "image: $IMAGE $(cat "$out/digest")"
	echo "  $out/cueue-controller-oci.tar ($(du -k "$out/cueue-controller-oci.tar" | cut -f1) KiB)"
	echo "  $out/cueue-controller-docker.tar ($(du -k "$out/cueue-controller-docker.tar" | cut -f1) KiB)"
}

case $mode in
rootfs) make_rootfs ;;
image) make_image ;;
*)
	echo "usage: scripts/image.sh rootfs|image BINARY OUTDIR" >&2
	exit 2
	;;
esac
