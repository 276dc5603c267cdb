#!/bin/sh
# Flood: endless two-byte lines on stdout (`yes`), never reading stdin.
exec yes
