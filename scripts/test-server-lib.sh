# Shared by scripts/test-pulse.sh and scripts/test-pipewire.sh (sourced, not run): starting
# background processes that hold no caller's descriptor, and the keeper stream.
# The caller sets SINK, and PULSE_SERVER when the server is not the environment's default.

# pactl's labels ("Sink:", "Corked:") are translated: read them in one language.
export LC_ALL=C

# Succeeds as soon as the command given does, trying it again until SECONDS have passed. Each
# check has a deadline of its own (timeout 5), which a server that is fine can miss once on a
# loaded machine: one miss must neither end a server that answers nor fail a run.
wait_until() {
  local deadline=$((SECONDS + $1))
  shift
  until "$@"; do
    [ "$SECONDS" -lt "$deadline" ] || return 1
    sleep 0.2
  done
}

# Fails, naming it, when a program the script needs is not on PATH: run under `make test`, a
# test server that cannot start fails the run, and says why in one line.
require_tools() {
  local tool
  for tool in "$@"; do
    command -v "$tool" >/dev/null || { echo "$(basename "$0"): $tool is not on PATH (scripts/install-deps.sh test installs it)" >&2; exit 69; }
  done
}

# Closes every descriptor above standard error, so a process started from here never holds a
# caller's pipe open (a test reading this script's output would otherwise wait for it forever).
close_inherited_descriptors() {
  local fd n
  for fd in /proc/$BASHPID/fd/*; do
    n=${fd##*/}
    [ "$n" -gt 2 ] 2>/dev/null && eval "exec $n>&-"
  done
  return 0
}

# Runs a command in the background in a session of its own (so it can be ended as a group, and
# outlives this script), its output appended to a log (or dropped), no descriptor inherited.
# Sets DETACHED_PID: the command's own process id (setsid does not fork here: a background
# subshell of a script is no process group leader).
detach() {
  local log=$1
  shift
  (
    close_inherited_descriptors
    cd /
    exec setsid "$@" </dev/null >>"$log" 2>&1
  ) &
  DETACHED_PID=$!
}

# The keeper: a silent stream that keeps the sink running, as a sound card always runs (an idle
# null sink takes about 2 s to wake for each new or recovering stream). Its latency is low, as a
# sound card's is: a null sink sleeps as long as its most patient stream allows, and a new stream
# behind a stream with pacat's default 2 s latency waits as long to be heard. It is known to the
# server by its client name, and its stream name says when it ends: only a keeper the server
# itself reports playing on its own sink counts (a keeper found by process name may belong to
# another server, or to one since restarted, and leave this one idle).
KEEPER_CLIENT=gong-test-keeper
KEEPER_SECONDS=7200
# A keeper with less than this left is replaced, so that it cannot end in the middle of a run.
KEEPER_MARGIN_SECONDS=1800

# Succeeds when a keeper with at least KEEPER_MARGIN_SECONDS to live plays, uncorked, on SINK of
# the server PULSE_SERVER (or the default) reaches.
keeper_plays() {
  local sink_index
  sink_index=$(timeout 5 pactl list short sinks 2>/dev/null | awk -v name="$SINK" '$2 == name { print $1 }')
  [ -n "$sink_index" ] || return 1
  timeout 5 pactl list sink-inputs 2>/dev/null | awk -v sink="$sink_index" -v client="$KEEPER_CLIENT" \
      -v needed="$(($(date +%s) + KEEPER_MARGIN_SECONDS))" '
    function judge() { if (onSink && !corked && name == client && ends >= needed) found = 1 }
    /^Sink Input #/ { judge(); onSink = 0; corked = 1; name = ""; ends = 0 }
    /^\tSink: / { onSink = ($2 == sink) }
    /^\tCorked: / { corked = ($2 != "no") }
    /^\t\tapplication\.name = / { name = $0; sub(/^[^"]*"/, "", name); sub(/"$/, "", name) }
    /^\t\tmedia\.name = "[^"]* until [0-9]+"$/ { ends = $NF; gsub(/"/, "", ends); ends += 0 }
    END { judge(); exit !found }'
}

# Starts a keeper unless one plays, and waits until the server reports it playing.
ensure_keeper() {
  keeper_plays && return 0
  local ends=$(($(date +%s) + KEEPER_SECONDS))
  detach /dev/null timeout "$KEEPER_SECONDS" pacat --playback --raw --format=float32le --rate=48000 --channels=2 \
    --latency-msec=20 --device="$SINK" --client-name="$KEEPER_CLIENT" --stream-name="$KEEPER_CLIENT until $ends" /dev/zero
  if ! wait_until 30 keeper_plays; then
    echo "$(basename "$0"): the keeper stream did not start playing on $SINK${PULSE_SERVER:+ ($PULSE_SERVER)}" >&2
    return 69
  fi
  # A null sink loaded with no stream renders 2 s ahead at once and sleeps until then: the
  # keeper's low latency counts only from its next wake-up. Until it does, a new stream's first
  # writes wait a second and more (bench/RESULTS.md, stop 53). A tenth of a second of silence,
  # played to its end, waits that wake-up out.
  if ! head -c 19200 /dev/zero | timeout 10 pacat --playback --raw --format=float32le --rate=48000 --channels=2 \
      --latency-msec=20 --device="$SINK" --client-name=gong-test-probe; then
    echo "$(basename "$0"): a short stream did not play to its end on $SINK${PULSE_SERVER:+ ($PULSE_SERVER)} within 10 s" >&2
    return 69
  fi
}
