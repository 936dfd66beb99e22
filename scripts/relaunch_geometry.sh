#!/usr/bin/env bash
# Relaunch the fluxgui window N times in a real window manager (Xvfb + openbox) and print
# where its frame lands each time: a window that "comes back where it was" prints the
# same line N times (issue 37: it crept 20 px down per launch).
#
#   scripts/relaunch_geometry.sh [DISPLAY_NUMBER] [RUNS] [SCALE] [TARGET] [SHOTS_DIR]
#
# The first run opens Review, Doctor and Chat by their keys and shrinks the window to
# 900x600 (xdotool); every later run must come back at that place and size. Screenshots
# of the first and last runs go to SHOTS_DIR when given (ImageMagick's import).
# Needs Xvfb, openbox, xdotool. Settings go to a private temporary folder.
set -euo pipefail
NUM=${1:-92}; RUNS=${2:-10}; SCALE=${3:-1}; TARGET=${4:-demo}; SHOTS=${5:-}
HERE=$(cd "$(dirname "$0")/.." && pwd)
FLUXGUI=${FLUXGUI:-$HERE/.venv/bin/fluxgui}
TMP=$(mktemp -d)
export DISPLAY=:$NUM XDG_CONFIG_HOME=$TMP/config FLUXGUI_DATA_DIR=$TMP/data FLUXGUI_CACHE_DIR=$TMP/cache
export QT_SCALE_FACTOR=$SCALE QT_QPA_PLATFORM=xcb
Xvfb :$NUM -screen 0 1600x1000x24 >/dev/null 2>&1 & XVFB=$!
trap 'kill $WM $XVFB 2>/dev/null || true; rm -rf "$TMP"' EXIT
for _ in $(seq 50); do xdpyinfo >/dev/null 2>&1 && break; sleep 0.1; done
openbox >/dev/null 2>&1 & WM=$!
sleep 1
for run in $(seq "$RUNS"); do
  "$FLUXGUI" "$TARGET" >/dev/null 2>&1 & APP=$!
  WID=""
  for _ in $(seq 100); do
    WID=$(xdotool search --pid "$APP" --onlyvisible --name 'fluxgui' 2>/dev/null | head -1 || true)
    [ -n "$WID" ] && break; sleep 0.2
  done
  [ -n "$WID" ] || { echo "run $run: no window"; kill "$APP"; exit 1; }
  sleep 1.5  # the window manager has framed it
  if [ "$run" = 1 ]; then
    xdotool windowactivate --sync "$WID" 2>/dev/null || true
    for keys in ctrl+shift+r ctrl+shift+h ctrl+shift+t; do
      xdotool key --window "$WID" --clearmodifiers "$keys"; sleep 0.7
    done
    xdotool windowsize --sync "$WID" 900 600 2>/dev/null || xdotool windowsize "$WID" 900 600
    sleep 1
  fi
  if [ -n "$SHOTS" ] && { [ "$run" = 1 ] || [ "$run" = "$RUNS" ]; }; then
    mkdir -p "$SHOTS"; OUT="$SHOTS/run$run-${SCALE}x.png"
    # the whole screen, with ImageMagick's import or else Qt's own grab
    import -window root "$OUT" 2>/dev/null || QT_SCALE_FACTOR=1 "$(dirname "$FLUXGUI")/python" -c \
      "import sys; from PySide6.QtGui import QGuiApplication as A; a = A(sys.argv); A.primaryScreen().grabWindow(0).save(sys.argv[1])" "$OUT"
  fi
  # the client area's position and size, as the window manager reports it
  GEO=$(xdotool getwindowgeometry "$WID" | tr -s ' ' | sed -n 's/.*Position: \([0-9,]*\).*/\1/p;s/.*Geometry: \([0-9x]*\).*/\1/p' | paste -sd' ')
  echo "run $run: client at ${GEO% *} size ${GEO#* }"
  xdotool windowactivate --sync "$WID" key --clearmodifiers ctrl+q 2>/dev/null || true
  for _ in $(seq 100); do kill -0 "$APP" 2>/dev/null || break; sleep 0.1; done
  kill -0 "$APP" 2>/dev/null && { echo "run $run: did not quit"; kill "$APP"; }
done
