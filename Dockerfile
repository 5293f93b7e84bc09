# The hub image (the default target, last below): one hub process (python -m server) listening on
# 0.0.0.0:8080. The target "worker" is the engine worker's image (python -m server.worker, with
# the Debian engines it drives; docs/engines.md): docker build --target worker .
#
# The package is installed in editable mode from /app so that the server finds migrations/ and
# config/ next to its sources (server.store.migrate and server.config locate them relative to the
# package). Settings come from config/ (HUB_CONFIG) and HUB_* environment variables.
FROM python:3.11-slim AS base

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    HUB_HOST=0.0.0.0 \
    HUB_PORT=8080

WORKDIR /app
COPY pyproject.toml README.md alembic.ini ./
COPY server ./server
COPY migrations ./migrations
COPY config ./config
RUN pip install --no-cache-dir -e ".[speed]" \
    && useradd --system --uid 10001 --home-dir /app hub \
    && mkdir -p /app/data /app/keys && chown hub /app/data /app/keys

# The engine worker: the same package and the engines from Debian (in /usr/games).
FROM base AS worker
USER root
RUN apt-get update \
    && apt-get install -y --no-install-recommends sjaakii hachu fairy-stockfish fairymax \
    && rm -rf /var/lib/apt/lists/*
ENV PATH="/usr/games:${PATH}"
USER hub
CMD ["python", "-m", "server.worker"]

FROM base AS hub
USER hub
EXPOSE 8080
HEALTHCHECK --interval=5s --timeout=3s --start-period=20s --retries=3 \
    CMD ["python", "-c", "import sys, urllib.request; sys.exit(urllib.request.urlopen('http://127.0.0.1:8080/healthz', timeout=2).status != 200)"]
CMD ["python", "-m", "server"]
