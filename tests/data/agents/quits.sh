#!/bin/sh
# An agent program that gives up at once: it neither looks at the phone nor touches it.
exit 0
