# One image for every part: the compose services differ only by their `contextq …` command.
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    ORT_DISABLE_TELEMETRY=1 \
    DATA_DIR=/data

WORKDIR /app

# dependencies first (cached while only the source changes)
COPY pyproject.toml README.md ./
COPY clients/python ./clients/python
COPY contextq ./contextq
COPY cli ./cli
COPY api ./api
COPY service ./service
COPY worker ./worker
COPY tasks ./tasks
COPY store ./store
COPY migrations ./migrations
RUN pip install ./clients/python . \
 && useradd --system --uid 10001 --home-dir /app contextq \
 && mkdir -p /data \
 && chown contextq:contextq /data

USER contextq
VOLUME ["/data"]
EXPOSE 8000 5555

CMD ["contextq", "api", "--host", "0.0.0.0", "--port", "8000"]
