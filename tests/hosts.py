"""hosts.py: separate hosts for tests, made of Linux network namespaces.

Hosts(n) makes n namespaces, each a host with its own network stack and
one address, 10.231.0.1 to 10.231.0.n, on a bridge that lives in a further
namespace of its own (the switch): nothing is added to the machine's own
namespace, and the range is reachable only from inside. A command "on host
k" runs in k's network namespace and in mount and UTS namespaces of its
own, where the host is named asgdhK and /etc/hosts names every host (a
file bound over it); the rest of the machine (files, /sys, cgroups) it
sees as it is, so daemons such as slurmd run there as on a node. Names carry this
process's id and start time (asgd-PID.START-h0, ..., asgd-PID.START-sw), so
tests running at once do not meet; namespaces left by a test process that
was killed are removed by the next one, with what still runs in them (a
process that has the dead one's id since is not it). Leaving the `with`
block (a failed check, an exception, SIGTERM or Ctrl-C, while the hosts
are being made too) stops every process it started and removes every
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


def _started(pid):
    """Process pid's start time (clock ticks after boot), or None if it is
    gone."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[19]
    except (OSError, IndexError):
        return None


def _kill_inside(name):
    """Kills what still runs in namespace name (a launcher's orphans: ranks,
    job steps, daemons)."""
    pids = subprocess.run(["ip", "netns", "pids", name], capture_output=True,
                          text=True).stdout.split()
    for pid in pids:
        try:
            os.kill(int(pid), signal.SIGKILL)
        except (ProcessLookupError, ValueError):
            pass


def _remove_stale():
    """Namespaces, their host tables and what runs in them, of test
    processes that are gone (killed by a timeout): a process alive under a
    dead one's id, started later, is not its owner (its namespaces were kept,
    and the next test skipped on "File exists")."""
    listing = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
    names = {line.split()[0] for line in listing.splitlines() if line.split()}
    if os.path.isdir("/etc/netns"):
        names |= set(os.listdir("/etc/netns"))
    for name in names:
        parts = name.split("-")
        owner = parts[1].split(".") if len(parts) == 3 else []
        if not name.startswith(PREFIX) or len(owner) not in (1, 2) or not owner[0].isdigit():
            continue
        started = _started(int(owner[0]))
        if started is None or (len(owner) == 2 and started != owner[1]):
            _kill_inside(name)
            subprocess.run(["ip", "netns", "del", name], capture_output=True)
            shutil.rmtree(f"/etc/netns/{name}", ignore_errors=True)


class Hosts:
    def __init__(self, count):
        tag = f"{PREFIX}{os.getpid()}.{_started(os.getpid())}"
        self.names = [f"{tag}-h{k}" for k in range(count)]
        self.switch = f"{tag}-sw"
        self.addresses = [f"{SUBNET}{k + 1}" for k in range(count)]
        self.hostnames = [f"asgdh{k}" for k in range(count)]
        self.procs = []
        self._made = []
        self._signals = {}

    def __enter__(self):
        if os.geteuid() != 0:
            raise Unavailable("network namespaces need root")
        for tool in ("ip", "nsenter", "unshare"):
            if not shutil.which(tool):
                raise Unavailable(f"no `{tool}`")
        for sig in (signal.SIGTERM, signal.SIGINT):   # a stop still removes everything
            self._signals[sig] = signal.signal(sig, self._stopped)
        try:
            _remove_stale()
            self._make()
            # a host must run a command (nsenter and unshare need privileges a
            # container may not give) and reach another over the bridge
            probe = subprocess.run(self.command(0, ["ip", "route", "get", self.addresses[-1]]),
                                   capture_output=True, text=True)
            if probe.returncode != 0:
                raise RuntimeError(f"a command on a host failed: {probe.stderr.strip()}")
        except (RuntimeError, OSError) as e:
            self.close()
            raise Unavailable(f"cannot make network namespaces: {e}")
        except BaseException:   # a stop (SystemExit) while they were made
            self.close()
            raise
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
        table = "127.0.0.1 localhost\n" + "".join(
            f"{a} {n}\n" for a, n in zip(self.addresses, self.hostnames))
        for name in self.names:
            os.makedirs(f"/etc/netns/{name}", exist_ok=True)
            with open(f"/etc/netns/{name}/hosts", "w") as f:
                f.write(table)
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
        by tbf on both its ends. The bucket is small (32 KB): a larger one
        lets each transfer that follows a pause burst through at line
        rate (256 KB made a 0.94 MB pull 27% faster than the rate)."""
        for ns, dev in ((self.names[k], "eth0"), (self.switch, f"port{k}")):
            run = subprocess.run(["ip", "netns", "exec", ns, "tc", "qdisc", "add", "dev", dev,
                                  "root", "tbf", "rate", rate, "burst", "32kb", "latency",
                                  "100ms"], capture_output=True, text=True)
            if run.returncode != 0:
                raise Unavailable(f"tc tbf: {run.stderr.strip()}")

    def command(self, k, argv):
        """argv as run on host k."""
        enter = (f"mount --bind /etc/netns/{self.names[k]}/hosts /etc/hosts && "
                 f"hostname {self.hostnames[k]} && exec \"$@\"")
        return ["nsenter", f"--net=/var/run/netns/{self.names[k]}", "unshare", "--mount",
                "--uts", "sh", "-c", enter, "sh", *argv]

    def popen(self, k, argv, **kwargs):
        """Starts argv on host k; close() stops it if it is still running."""
        p = subprocess.Popen(self.command(k, argv), **kwargs)
        self.procs.append(p)
        return p

    def close(self):
        for p in self.procs:   # asked first: a daemon reaps its own children
            if p.poll() is None:
                p.terminate()
        for p in self.procs:
            try:
                p.wait(timeout=5)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
        self.procs = []
        for name in reversed(self._made):
            _kill_inside(name)
            # a namespace takes its links with it
            subprocess.run(["ip", "netns", "del", name], capture_output=True)
            shutil.rmtree(f"/etc/netns/{name}", ignore_errors=True)
        self._made = []
        for name in self.names:   # written before their namespaces were made
            shutil.rmtree(f"/etc/netns/{name}", ignore_errors=True)
        for sig, handler in self._signals.items():
            signal.signal(sig, handler)
        self._signals = {}
