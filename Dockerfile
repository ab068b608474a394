# Build: docker build -t touchsync .   Run: docker compose up
FROM swift:6.0-bookworm AS build
RUN apt-get update && apt-get install -y --no-install-recommends libsqlite3-dev libssl-dev libcurl4-openssl-dev && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY Package.swift ./
COPY Sources ./Sources
COPY Tests ./Tests
COPY bench ./bench
RUN swift build -c release --static-swift-stdlib --product touchsync && cp "$(swift build -c release --show-bin-path)/touchsync" /touchsync

FROM debian:bookworm-slim
RUN apt-get update && apt-get install -y --no-install-recommends libsqlite3-0 libssl3 libcurl4 curl ca-certificates \
    && rm -rf /var/lib/apt/lists/* && useradd --system --home /app touchsync
COPY --from=build /touchsync /usr/local/bin/touchsync
COPY Migrations /app/Migrations
WORKDIR /app
RUN mkdir -p /data && chown touchsync /data
USER touchsync
ENV TOUCHSYNC_HOST=0.0.0.0 TOUCHSYNC_PORT=3000 TOUCHSYNC_DATABASE=/data/touchsync.sqlite TOUCHSYNC_MIGRATIONS_DIR=/app/Migrations
EXPOSE 3000
HEALTHCHECK --interval=10s --timeout=3s --start-period=10s CMD curl -fsS http://127.0.0.1:3000/health || exit 1
ENTRYPOINT ["touchsync"]
CMD ["serve"]
