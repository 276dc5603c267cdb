"""Answers correctly, but its tools/list answer differs from process to
process (a random build number in the tool's description): trials that
succeed with different answers are not REPEATED_STABLE."""

import random

import _honest

tool = dict(_honest.ECHO, description="Return the text unchanged (build %d)." % random.randrange(10**9))
_honest.serve({"tools": [tool]})
