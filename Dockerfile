# The image `asgd k8s --image` names: asgd built from Debian's packages, for
# pods that each run one `asgd role`.
#   docker build -t asgd .
# With a base image that has nvcc (CUDA 12 or 13 on Debian 12 or Ubuntu),
# CMake builds the CUDA backend too:
#   docker build --build-arg BASE=nvidia/cuda:12.6.3-devel-ubuntu24.04 -t asgd-cuda .
ARG BASE=debian:12
FROM ${BASE}
ENV DEBIAN_FRONTEND=noninteractive
RUN apt-get update && apt-get install -y --no-install-recommends \
        build-essential cmake pkg-config libzmq3-dev libopenblas-dev libinih-dev \
        libcjson-dev zlib1g-dev libcmocka-dev dataset-fashion-mnist git \
    && rm -rf /var/lib/apt/lists/*
COPY . /src/asgd
RUN cmake -S /src/asgd -B /src/asgd/build -DCMAKE_BUILD_TYPE=Release \
    && cmake --build /src/asgd/build -j"$(nproc)" --target asgd \
    && install -m 0755 /src/asgd/build/asgd /usr/local/bin/asgd \
    && rm -rf /src/asgd/build
WORKDIR /runs
CMD ["asgd", "--version"]
