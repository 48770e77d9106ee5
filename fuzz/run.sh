#!/usr/bin/env bash
# Builds the fuzz targets with libFuzzer's coverage instrumentation (the flags cargo-fuzz sets,
# on the stable toolchain, without AddressSanitizer: the code under test forbids `unsafe`) and
# runs each one for SECONDS (default 60), seeded from the project's own Terraform fixtures and
# atlantis.yaml examples. Fails on the first panic, hang (10 s per input) or input that makes the
# process use more than 1 GiB; the input that did it is kept under fuzz/artifacts/TARGET/ and
# replays with `fuzz/target/<triple>/release/TARGET fuzz/artifacts/TARGET/crash-…`.
# Usage: bash fuzz/run.sh [SECONDS] [TARGET...]
set -euo pipefail
cd "$(dirname "$0")"
secs="${1:-60}"
shift || true
targets=("$@")
[ "${#targets[@]}" -gt 0 ] || targets=(tf_expression tf_module comment atlantis_yaml)

host="$(rustc -vV | sed -n 's/^host: //p')"
export RUSTFLAGS="-Cpasses=sancov-module -Cllvm-args=-sanitizer-coverage-level=4 \
-Cllvm-args=-sanitizer-coverage-inline-8bit-counters -Cllvm-args=-sanitizer-coverage-pc-table \
-Cllvm-args=-sanitizer-coverage-trace-compares --cfg fuzzing"
# --target keeps the instrumentation off build scripts and proc macros.
cargo build --release --locked --bins --target "$host" --target-dir target

seed() {
    local target="$1" corpus="$2"
    case "$target" in
        tf_expression)
            printf '%s' 'parseint("12", 37)' >"$corpus/seed-parseint"
            printf '%s' '[for k, v in {a = 1} : "${k}=${v}"]' >"$corpus/seed-for"
            printf '%s' 'formatlist("%s-%d", ["a"], range(3))' >"$corpus/seed-formatlist" ;;
        tf_module)
            find ../tests/fixtures -name '*.tf' -size -16k | head -n 200 | while read -r f; do
                cp "$f" "$corpus/seed-$(printf '%s' "$f" | sha1sum | cut -c1-12)"
            done ;;
        comment)
            for c in 'atlantis plan' 'atlantis apply -p web' 'atlantis plan -d envs/dev -w staging -- -var x=1' \
                     'atlantis unlock' '@atoll-bot help' 'atlantis version'; do
                printf '%s' "$c" >"$corpus/seed-$(printf '%s' "$c" | sha1sum | cut -c1-12)"
            done ;;
        atlantis_yaml)
            find ../tests/fixtures -name 'atlantis*.yaml' -size -16k | while read -r f; do
                cp "$f" "$corpus/seed-$(printf '%s' "$f" | sha1sum | cut -c1-12)"
            done
            printf 'version: 3\nprojects:\n- dir: envs/dev\n  autoplan:\n    when_modified: ["*.tf"]\n' >"$corpus/seed-basic" ;;
    esac
}

dict_for() {
    case "$1" in
        tf_expression|tf_module) echo dict/terraform.dict ;;
        comment) echo dict/comment.dict ;;
        atlantis_yaml) echo dict/atlantis_yaml.dict ;;
    esac
}

for t in "${targets[@]}"; do
    corpus="corpus/$t"
    mkdir -p "$corpus" "artifacts/$t"
    seed "$t" "$corpus"
    echo "==> fuzzing $t for ${secs}s"
    log="artifacts/$t/last-run.log"
    if ! "target/$host/release/$t" -max_total_time="$secs" -max_len=8192 -timeout=10 \
        -rss_limit_mb=1024 -dict="$(dict_for "$t")" -artifact_prefix="artifacts/$t/" \
        -print_final_stats=1 "$corpus" >"$log" 2>&1; then
        tail -n 60 "$log"
        echo "fuzz target $t failed: the input is under fuzz/artifacts/$t/"
        exit 1
    fi
    grep -E '^(Done|stat::number_of_executed_units|stat::peak_rss_mb)' "$log" || tail -n 3 "$log"
done
