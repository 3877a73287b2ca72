# SPDX-License-Identifier: Apache-2.0
# The cueue-controller image for those who build with Docker (BuildKit):
#
#   docker build -t cueue-controller:$(cat VERSION) \
#     --build-arg VERSION=$(cat VERSION) \
#     --build-arg REVISION=$(git rev-parse HEAD) .
#
# The build stage is Debian bookworm running the project's own targets:
# scripts/install-deps.sh --build, then `make image-rootfs` (the release
# controller, exactly the shared libraries it loads, the CA bundle, the
# user nonroot 65532; scripts/image.sh). The runtime stage is that rootfs
# on an empty base: no shell, no package manager. `make image` builds the
# same image without Docker (umoci and skopeo), as the tests do.
FROM debian:bookworm AS build
WORKDIR /src
COPY . .
RUN scripts/install-deps.sh --build && rm -rf /var/lib/apt/lists/*
# The ledger directory apart: COPY makes what it copies root's unless
# told otherwise, and only this directory is the runtime user's.
RUN make image-rootfs IMAGE_DIR=/image && mkdir /ledger && \
    mv /image/rootfs/var/lib/cueue /ledger/

FROM scratch
ARG VERSION=unknown
ARG REVISION=unknown
ARG SOURCE=unknown
COPY --from=build /image/rootfs/ /
COPY --from=build --chown=65532:65532 /ledger/ /var/lib/
USER 65532:65532
ENV PATH=/usr/local/bin SSL_CERT_FILE=/etc/ssl/certs/ca-certificates.crt
EXPOSE 9443/tcp 8443/tcp 8081/tcp 8082/tcp
VOLUME /var/lib/cueue
ENTRYPOINT ["/usr/local/bin/cueue-controller"]
LABEL org.opencontainers.image.title="cueue-controller" \
      org.opencontainers.image.description="Kueue-compatible job-queueing controller" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.revision="${REVISION}" \
      org.opencontainers.image.source="${SOURCE}" \
      org.opencontainers.image.licenses="Apache-2.0"
