#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# scripts/install-deps.sh - install every Debian (bookworm) package cueue
# needs to build, test, benchmark and run its quickstart.
#
#   scripts/install-deps.sh          install what is missing (as root)
#   scripts/install-deps.sh --check  exit 0 if nothing is missing, else 1
#   scripts/install-deps.sh --build  only what building the controller
#                                    and its image rootfs needs (the
#                                    Dockerfile's build stage)
#
# `make test` and `make run` call --check first and this script when
# something is missing, so a fresh machine needs no other set-up step.
set -eu

PKGS="build-essential pkg-config make gcc clang clang-format clang-tidy
cppcheck libclang-rt-14-dev valgrind libev-dev libcurl4-openssl-dev
libsqlite3-dev sqlite3 libcriterion-dev libjansson-dev libyaml-dev
libmicrohttpd-dev libssl-dev openssl curl jq python3 python3-kubernetes
python3-yaml python3-jsonpatch python3-prometheus-client gnuplot-nox
procps psmisc iproute2 ca-certificates umoci skopeo protobuf-c-compiler
libprotobuf-c-dev libgnutls28-dev zlib1g-dev"
# libgnutls28-dev: the controller reads a client's certificate chain
# from libmicrohttpd's GnuTLS session (the visibility server).
# protobuf-c-compiler and libprotobuf-c-dev: cueue-apiserver's protobuf
# bodies (tests/apiserver/kube.proto, compiled at build time).
# umoci and skopeo: `make image` (scripts/image.sh) assembles the OCI
# image and writes its archives without a daemon, a registry or root;
# make test checks the image (make image-check).
BUILD_PKGS="build-essential pkg-config make gcc libev-dev libcurl4-openssl-dev
libsqlite3-dev libjansson-dev libyaml-dev libmicrohttpd-dev libssl-dev
libgnutls28-dev zlib1g-dev ca-certificates"
if [ "${1:-}" = "--build" ]; then
	PKGS=$BUILD_PKGS
fi

missing=""
for p in $PKGS; do
	if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null |
	    grep -q "install ok installed"; then
		missing="$missing $p"
	fi
done
# kubectl (not for --build): the machines carry a modern kubectl (a
# dispatcher to 1.27-1.33). Debian's kubernetes-client (1.20) owns the
# same path and conflicts with it, so it is installed only where no
# kubectl exists.
need_kubectl=0
command -v kubectl >/dev/null 2>&1 || need_kubectl=1
[ "${1:-}" = "--build" ] && need_kubectl=0

if [ "${1:-}" = "--check" ]; then
	[ -z "$missing" ] && [ $need_kubectl -eq 0 ] && exit 0
	echo "missing:$missing$( [ $need_kubectl -eq 1 ] && echo ' kubectl')" >&2
	exit 1
fi

[ $need_kubectl -eq 1 ] && missing="$missing kubernetes-client"
if [ -z "$missing" ]; then
	echo "install-deps: nothing to install"
	exit 0
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then
	if command -v sudo >/dev/null 2>&1; then
		SUDO="sudo"
	else
		echo "install-deps: need root to install:$missing" >&2
		exit 1
	fi
fi
echo "install-deps: installing:$missing"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -q
# shellcheck disable=SC2086
$SUDO apt-get install -y -q --no-install-recommends $missing
