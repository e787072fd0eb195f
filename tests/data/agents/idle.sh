#!/bin/sh
# An agent program that never finishes: it looks once, then waits forever (a hung model
# call), until the episode's timeout ends it.
adb exec-out screencap -p > /dev/null
while :; do
  sleep 1
done
