# The sluice image: a static binary FROM scratch, run as the user sluice (65532), in /work.
#
#   docker build -t sluice --build-arg VERSION=$(git describe --tags --always) \
#     --build-arg COMMIT=$(git rev-parse HEAD) .
#   docker run --rm --user "$(id -u)" -v "$PWD:/work" sluice run pipeline.yaml   # files in $PWD
#
# The build stage runs the release recipe (scripts/release context), so the binary is built as
# the release binaries are. With no registry to pull golang from, build the binary on the
# host and use Dockerfile.prebuilt instead: scripts/release image (docs/operations.md).
ARG GO_VERSION=1.26

# The build stage runs on the builder's platform and cross-compiles for the target's
# (docker buildx build --platform linux/arm64 needs no emulation: the binary is pure Go).
FROM --platform=$BUILDPLATFORM golang:${GO_VERSION}-bookworm AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ARG VERSION="" COMMIT="" DATE="" TARGETARCH
RUN VERSION="$VERSION" COMMIT="$COMMIT" DATE="$DATE" GOARCH="$TARGETARCH" scripts/release context /image

FROM scratch
COPY --from=build /image/rootfs/ /
COPY --from=build --chown=65532:65532 /image/work/ /work/
USER 65532:65532
WORKDIR /work
EXPOSE 9464
ENTRYPOINT ["/usr/local/bin/sluice"]
CMD ["--help"]
