# Fanout's image: `fanout` on a slim Debian, with jemalloc (its allocator) and CA certificates,
# run as a non-root user (10001, which `fanout cluster render`'s pods run as).
#
#   podman build -t fanout:0.2.0 .            # or docker build: the binary built in the Swift image
#   podman run --rm --network host fanout:0.2.0 run --count 10000
#
# Stages: `build` compiles with the official Swift 6.3 image and --static-swift-stdlib (no Swift
# runtime in the image); `runtime` is the slim base with what the binary loads; the last
# stage, `fanout`, puts the two together. `prebuilt` takes a binary built elsewhere from the
# build context's dist/ instead (scripts/image.sh, where no Swift image can be pulled): one
# built with --static-swift-stdlib, or one with the Swift runtime libraries it loads beside it
# (its RUNPATH has $ORIGIN). BASE names the runtime's base image (scripts/image.sh passes one it made
# with debootstrap).
ARG SWIFT_IMAGE=docker.io/library/swift:6.3-bookworm
ARG BASE=docker.io/library/debian:bookworm-slim

FROM ${SWIFT_IMAGE} AS build
RUN apt-get update && apt-get install -y --no-install-recommends libjemalloc-dev && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY . .
RUN swift build -c release --product fanout --static-swift-stdlib \
    && cp "$(swift build -c release --show-bin-path)/fanout" /fanout

FROM ${BASE} AS runtime
RUN apt-get update \
    && apt-get install -y --no-install-recommends libjemalloc2 ca-certificates \
    && rm -rf /var/lib/apt/lists/* \
    && useradd --uid 10001 --user-group --no-create-home --shell /usr/sbin/nologin fanout
WORKDIR /tmp

FROM runtime AS prebuilt
COPY dist/ /opt/fanout/
RUN ln -s /opt/fanout/fanout /usr/local/bin/fanout
USER 10001:10001
ENTRYPOINT ["fanout"]

FROM runtime AS fanout
COPY --from=build /fanout /usr/local/bin/fanout
USER 10001:10001
ENTRYPOINT ["fanout"]
