# TouchSync server image.   Build: docker build -t touchsync .   Run: docker compose up --build
#
# Stage 1 compiles one self-contained binary (Swift runtime linked in statically, Migrations/
# embedded by the build). The Swift image must be at least the highest swift-tools-version of the
# package and its resolved dependencies (swift-log 1.16.2 declares 6.2); conformance/test_cli.py
# test_dockerfile_swift_is_new_enough_for_every_manifest checks this.
FROM swift:6.2-bookworm AS build
RUN apt-get update \
    && apt-get install -y --no-install-recommends libsqlite3-dev libssl-dev libcurl4-openssl-dev libpq-dev pkg-config \
    && rm -rf /var/lib/apt/lists/*
WORKDIR /src
# Every directory Package.swift names must exist, even to build one product.
COPY Package.swift ./
COPY Sources ./Sources
COPY Plugins ./Plugins
COPY Migrations ./Migrations
COPY Tests ./Tests
COPY bench ./bench
COPY fuzz ./fuzz
RUN swift build -c release --static-swift-stdlib --product touchsync \
    && install -m 0755 "$(swift build -c release --show-bin-path)/touchsync" /touchsync

# Stage 2: Debian slim with only the system libraries of the design (SQLite, libcrypto, libcurl for APNs,
# libpq for the PostgreSQL backend of deploy/docker-compose.cluster.yml).
FROM debian:bookworm-slim
RUN apt-get update \
    && apt-get install -y --no-install-recommends libsqlite3-0 libssl3 libcurl4 libpq5 ca-certificates \
    && rm -rf /var/lib/apt/lists/* \
    && useradd --system --uid 10001 --user-group --home-dir /nonexistent --shell /usr/sbin/nologin touchsync \
    && mkdir -p /data && chown touchsync:touchsync /data
COPY --from=build /touchsync /usr/local/bin/touchsync
USER touchsync
WORKDIR /data
# The database (and its generated JWT secret, when none is configured) live on this volume.
VOLUME ["/data"]
ENV TOUCHSYNC_HOST=0.0.0.0 TOUCHSYNC_PORT=3000 TOUCHSYNC_DATABASE=/data/touchsync.sqlite
EXPOSE 3000
# GET /health over bash's /dev/tcp (no curl in the image): healthy when the status line says 200.
HEALTHCHECK --interval=10s --timeout=3s --start-period=10s --retries=3 CMD ["bash", "-c", "exec 3<>/dev/tcp/127.0.0.1/${TOUCHSYNC_PORT:-3000} && printf 'GET /health HTTP/1.0\\r\\nHost: 127.0.0.1\\r\\n\\r\\n' >&3 && head -n 1 <&3 | grep -q ' 200 '"]
ENTRYPOINT ["touchsync"]
CMD ["serve"]
