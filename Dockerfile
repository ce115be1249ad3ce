# syntax=docker/dockerfile:1
# The anonymizer service: a release build in the official Rust image, run as a non-root user in a slim
# Debian image. `docker compose up` (see docker-compose.yml) starts it next to PostgreSQL; alone, it keeps
# a SQLite database in the /data volume.

FROM rust:1-bookworm AS builder
WORKDIR /src
COPY . .
# Cache mounts keep the registry and the target directory between builds; the binary is copied out of the
# cached target directory because cache mounts are not part of the image.
RUN --mount=type=cache,target=/usr/local/cargo/registry \
    --mount=type=cache,target=/src/target \
    cargo build --release --locked --bin anonymizer \
    && install -m 0755 target/release/anonymizer /usr/local/bin/anonymizer

FROM debian:bookworm-slim AS runtime
RUN apt-get update \
    && apt-get install -y --no-install-recommends ca-certificates \
    && rm -rf /var/lib/apt/lists/* \
    && groupadd --system --gid 10001 anonymizer \
    && useradd --system --uid 10001 --gid anonymizer --home-dir /data --shell /usr/sbin/nologin anonymizer \
    && mkdir -p /data \
    && chown anonymizer:anonymizer /data
COPY --from=builder /usr/local/bin/anonymizer /usr/local/bin/anonymizer

ENV ANONYMIZER_LISTEN=0.0.0.0:8080 \
    ANONYMIZER_DATA_DIR=/data \
    ANONYMIZER_LOG_FORMAT=json
WORKDIR /data
VOLUME ["/data"]
EXPOSE 8080
USER 10001:10001

# No curl in the image: bash's /dev/tcp speaks just enough HTTP to ask /readyz for a 200 on the port of
# ANONYMIZER_LISTEN (127.0.0.1 when it listens on every address). /readyz answers 503 within 1 s while the
# database is unreachable, so the container turns unhealthy instead of hanging the check.
HEALTHCHECK --interval=10s --timeout=3s --start-period=20s --retries=3 \
    CMD ["bash", "-c", "listen=${ANONYMIZER_LISTEN:-127.0.0.1:8080}; host=${listen%:*}; host=${host#[}; host=${host%]}; case $host in ''|0.0.0.0|::) host=127.0.0.1;; esac; exec 3<>/dev/tcp/$host/${listen##*:} && printf 'GET /readyz HTTP/1.1\\r\\nHost: localhost\\r\\nConnection: close\\r\\n\\r\\n' >&3 && head -n 1 <&3 | grep -q ' 200 '"]

ENTRYPOINT ["anonymizer", "serve"]
