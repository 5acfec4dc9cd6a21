"""hosts.py: separate hosts for tests, made of Linux network namespaces.

Hosts(n) makes n namespaces, each a host with its own network stack and
one address, 10.231.0.1 to 10.231.0.n, on a bridge that lives in a further
namespace of its own (the switch): nothing is added to the machine's own
namespace, and the range is reachable only from inside. Names carry this
process's id (asgd-PID-h0, ..., asgd-PID-sw), so tests running at once do
not meet; namespaces left by a test process that was killed are removed
by the next one. Leaving the `with` block (a failed check, an exception,
SIGTERM or Ctrl-C) stops every process it started and removes every
namespace, and with them every link.

    with Hosts(3) as h:
        h.limit(1, "100mbit")                 # host 1's link, both ways
        p = h.popen(0, ["asgd", "ps", ...])   # runs "on host 0"

Unavailable says why hosts cannot be made here (not root, no `ip`, no
namespaces): tests skip with that reason."""
import os
import shutil
import signal
import subprocess

SUBNET = "10.231.0."
PREFIX = "asgd-"


class Unavailable(Exception):
    pass


def _ip(*args):
    run = subprocess.run(["ip", *args], capture_output=True, text=True)
    if run.returncode != 0:
        raise RuntimeError(f"ip {' '.join(args)}: {run.stderr.strip()}")


def _alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass
    return True


def _remove_stale():
    """Namespaces of test processes that are gone (killed by a timeout)."""
    listing = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
    for line in listing.splitlines():
        name = line.split()[0] if line.split() else ""
        parts = name.split("-")
        if len(parts) == 3 and name.startswith(PREFIX) and parts[1].isdigit() \
                and not _alive(int(parts[1])):
            subprocess.run(["ip", "netns", "del", name], capture_output=True)


class Hosts:
    def __init__(self, count):
        tag = f"{PREFIX}{os.getpid()}"
        self.names = [f"{tag}-h{k}" for k in range(count)]
        self.switch = f"{tag}-sw"
        self.addresses = [f"{SUBNET}{k + 1}" for k in range(count)]
        self.procs = []
        self._made = []
        self._signals = {}

    def __enter__(self):
        if os.geteuid() != 0:
            raise Unavailable("network namespaces need root")
        if not shutil.which("ip"):
            raise Unavailable("no `ip` (iproute2)")
        for sig in (signal.SIGTERM, signal.SIGINT):   # a stop still removes everything
            self._signals[sig] = signal.signal(sig, self._stopped)
        try:
            _remove_stale()
            self._make()
        except RuntimeError as e:
            self.close()
            raise Unavailable(f"cannot make network namespaces: {e}")
        return self

    def __exit__(self, *exc):
        self.close()
        return False

    @staticmethod
    def _stopped(sig, frame):
        raise SystemExit(f"stopped by signal {sig}")

    def _netns(self, name):
        _ip("netns", "add", name)
        self._made.append(name)
        _ip("-n", name, "link", "set", "lo", "up")

    def _make(self):
        self._netns(self.switch)
        _ip("-n", self.switch, "link", "add", "br0", "type", "bridge")
        _ip("-n", self.switch, "link", "set", "br0", "up")
        for k, name in enumerate(self.names):
            self._netns(name)
            _ip("-n", name, "link", "add", "eth0", "type", "veth", "peer", "name", f"port{k}",
                "netns", self.switch)
            _ip("-n", self.switch, "link", "set", f"port{k}", "master", "br0", "up")
            _ip("-n", name, "addr", "add", f"{self.addresses[k]}/24", "dev", "eth0")
            _ip("-n", name, "link", "set", "eth0", "up")

    def limit(self, k, rate):
        """Host k's link limited to rate (a tc rate, "100mbit") each way,
        by tbf on both its ends."""
        for ns, dev in ((self.names[k], "eth0"), (self.switch, f"port{k}")):
            run = subprocess.run(["ip", "netns", "exec", ns, "tc", "qdisc", "add", "dev", dev,
                                  "root", "tbf", "rate", rate, "burst", "256kb", "latency",
                                  "100ms"], capture_output=True, text=True)
            if run.returncode != 0:
                raise Unavailable(f"tc tbf: {run.stderr.strip()}")

    def command(self, k, argv):
        """argv as run on host k."""
        return ["ip", "netns", "exec", self.names[k], *argv]

    def popen(self, k, argv, **kwargs):
        """Starts argv on host k; close() stops it if it is still running."""
        p = subprocess.Popen(self.command(k, argv), **kwargs)
        self.procs.append(p)
        return p

    def close(self):
        for p in self.procs:
            if p.poll() is None:
                p.kill()
                p.wait()
        self.procs = []
        for name in reversed(self._made):   # a namespace takes its links with it
            subprocess.run(["ip", "netns", "del", name], capture_output=True)
        self._made = []
        for sig, handler in self._signals.items():
            signal.signal(sig, handler)
        self._signals = {}
