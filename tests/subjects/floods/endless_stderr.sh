#!/bin/sh
# Flood: endless lines on stderr, nothing on stdout.
exec yes "stderr flood from the subject" >&2
