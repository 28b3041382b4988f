# npaflow worker image: the project as a wheel with the skypilot extra, every
# dependency pinned by constraints.txt (the same file CI installs with).
#   docker build -t npaflow-worker:0.1.0 .
# Runs `npaflow worker` as a non-root user; the same image serves the SkyPilot
# API server in docker-compose.yml (`sky api start --deploy --foreground`).

FROM python:3.11.11-slim-bookworm AS wheel
WORKDIR /src
COPY pyproject.toml README.md constraints.txt ./
COPY npaflow ./npaflow
COPY workflows_def ./workflows_def
COPY activities ./activities
COPY worker ./worker
COPY specs ./specs
RUN pip wheel --no-cache-dir --no-deps --wheel-dir /dist .

FROM python:3.11.11-slim-bookworm
# rsync: the SkyPilot API server needs it to sync task files to its controller.
# The home and the examples' artifact root exist, owned by npaflow, so that the
# named volumes compose mounts there start out writable by it.
RUN apt-get update \
 && apt-get install -y --no-install-recommends rsync \
 && rm -rf /var/lib/apt/lists/* \
 && useradd --create-home --uid 10001 --shell /usr/sbin/nologin npaflow \
 && install -d -o npaflow -g npaflow /home/npaflow/.npaflow /tmp/npaflow-examples
COPY --from=wheel /dist /dist
COPY constraints.txt /dist/constraints.txt
RUN python -m venv /opt/npaflow \
 && /opt/npaflow/bin/pip install --no-cache-dir --constraint /dist/constraints.txt "$(ls /dist/npaflow-*.whl)[skypilot]" \
 && /opt/npaflow/bin/npaflow plan-spec "$(/opt/npaflow/bin/python -c 'import npaflow, pathlib; print(pathlib.Path(npaflow.__file__).parent / "specs/examples/gate-loop.yaml")')"
ENV PATH=/opt/npaflow/bin:$PATH \
    NPAFLOW_HOME=/home/npaflow/.npaflow \
    NPAFLOW_LOG_FORMAT=json \
    PYTHONUNBUFFERED=1
USER npaflow
WORKDIR /home/npaflow
HEALTHCHECK --interval=30s --timeout=20s --start-period=60s --retries=3 \
  CMD ["npaflow", "worker", "--health-check"]
ENTRYPOINT ["npaflow"]
CMD ["worker"]
