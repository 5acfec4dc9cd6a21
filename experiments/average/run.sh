#!/usr/bin/env bash
# Runs this experiment; arguments are config overrides (e.g. train.epochs=2).
exec "$(dirname "$0")/../../scripts/experiment.sh" "$(dirname "$0")" "$@"
