#!/bin/sh
# Flood: one endless line of NUL bytes on stdout, never a newline.
exec cat /dev/zero
