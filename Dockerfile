# The dpviz web app for a class (issue 37): docs/deploy.md.
#
#   docker build -t dpviz .
#   docker run --rm -p 8501:8501 dpviz            # http://localhost:8501, classroom mode
#
# Stage 1 builds the wheel from this checkout (setuptools, fetched by pip); stage 2 installs it
# with its [app] extra, constrained to requirements.txt's pins (the versions the tests ran), and
# runs `dpviz app --classroom` as an unprivileged user. There is no container runtime on the
# machine this was written on: tests/unit/test_packaging_wheel.py runs the same install (the
# wheel, its [app] extra, the pins as constraints) in a venv and runs the JSON-form RUN and
# HEALTHCHECK commands below against it; the image itself was not built there.

FROM python:3.11-slim AS wheel
WORKDIR /src
COPY . .
RUN pip install --no-cache-dir --quiet --upgrade pip \
 && pip wheel --no-cache-dir --no-deps -w /dist .

FROM python:3.11-slim
ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    MALLOC_ARENA_MAX=2 \
    DPVIZ_CLASSROOM=1
COPY --from=wheel /dist/ /tmp/dist/
COPY requirements.txt /tmp/requirements.txt
# Constraints may not carry extras (dask[distributed]==…): strip them; -r lines are not constraints.
RUN sed -E 's/\[[^]]*\]//' /tmp/requirements.txt | grep -v '^-r' > /tmp/constraints.txt \
 && pip install --quiet -c /tmp/constraints.txt "$(ls /tmp/dist/dpviz-*.whl)[app]" \
 && rm -rf /tmp/dist /tmp/requirements.txt /tmp/constraints.txt
# The live charts load plotly.js from the app's static folder, which the app fills on first use;
# the app's user cannot write into site-packages, so it is filled now, as root (read-only later).
RUN ["python", "-c", "import sys, dpviz.serve as s; sys.path.insert(0, str(s.app_root())); from app.components.live_chart import STATIC_DIR, serve_plotly_js; assert serve_plotly_js(STATIC_DIR), 'plotly.js not copied'"]
RUN useradd --create-home --uid 10001 dpviz
USER dpviz
WORKDIR /home/dpviz
EXPOSE 8501
HEALTHCHECK --interval=30s --timeout=5s --start-period=60s --retries=3 \
  CMD ["python", "-c", "import sys, urllib.request; sys.exit(urllib.request.urlopen('http://127.0.0.1:8501/_stcore/health', timeout=4).read() != b'ok')"]
# 0.0.0.0: reachable through the published port. Streamlit options go after --, e.g.
#   docker run … dpviz dpviz app --classroom --address 0.0.0.0 -- --server.disconnectedSessionTTL 60
CMD ["dpviz", "app", "--classroom", "--port", "8501", "--address", "0.0.0.0"]
