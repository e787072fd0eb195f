#!/bin/sh
# An agent program that replays device commands: one shell command line per line of the
# file named by $1. Before each it fetches a screenshot, as a screen-reading agent would,
# then sends the command with adb (which finds the phone through ANDROID_SERIAL).
set -e
while IFS= read -r line; do
  adb exec-out screencap -p < /dev/null > /dev/null
  adb shell "$line" < /dev/null
done < "$1"
