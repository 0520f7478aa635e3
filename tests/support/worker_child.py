"""``tether worker`` as if on another machine: ``python worker_child.py HOST ARGS...``.

The hostname is patched before any store exists, so this worker's leases name ``HOST``
and other workers cannot take them over by the dead-pid rule: only by lease expiry.
"""

import socket
import sys

if __name__ == "__main__":
    host = sys.argv[1]
    socket.gethostname = lambda: host
    sys.argv = ["tether", "worker", *sys.argv[2:]]
    from tether.ops.cli import main

    main()
