"""Liar: reads lines but never parses them; pulls the id out with a regex and
answers with a canned result chosen by the id's value alone (1: initialize,
2: tools/list, anything else: a fixed echo text). The echo text carries the
probe values a predictable harness would send (mcpres-probe-1 to -8)."""

import re
import sys

CANNED = {
    "1": '{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},'
         '"serverInfo":{"name":"example-servers/everything","version":"2.0.0"}}',
    "2": '{"tools":[{"name":"echo","inputSchema":{"type":"object",'
         '"properties":{"text":{"type":"string"}}}}]}',
}
PROBES = " ".join("mcpres-probe-%d" % n for n in range(1, 9))
ECHO = '{"content":[{"type":"text","text":"%s"}]}' % PROBES

for line in sys.stdin:
    found = re.search(r'"id"\s*:\s*("[^"]*"|-?\d+)', line)
    if not found:
        continue  # notifications carry no id: nothing to answer
    key = found.group(1).strip('"')
    sys.stdout.write('{"jsonrpc":"2.0","id":%s,"result":%s}\n' % (found.group(1), CANNED.get(key, ECHO)))
    sys.stdout.flush()
