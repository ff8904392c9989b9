"""What bells-idle.py and remote-idle.py share: a world of the run's own for the process they
measure, and how much that process woke and ran, read from /proc."""
import os
import tempfile


def private_world(prefix):
    """A fresh directory holding the XDG directories and HOME, and an environment pointing there:
    the process measured neither sees nor touches the user's own state."""
    work = tempfile.mkdtemp(prefix=prefix)
    env = dict(os.environ)
    for name in ("XDG_RUNTIME_DIR", "XDG_DATA_HOME", "XDG_STATE_HOME", "XDG_CONFIG_HOME"):
        env[name] = os.path.join(work, name.lower())
        os.makedirs(env[name], mode=0o700)
    env["HOME"] = work
    return work, env


def wake_ups_and_cpu(pid):
    """Its threads' voluntary context switches (each time one gave up the processor: a wake-up
    once it runs again), its CPU in ms (utime + stime), and how many threads it has."""
    tasks = f"/proc/{pid}/task"
    woke = 0
    for task in os.listdir(tasks):
        with open(f"{tasks}/{task}/status") as status:
            for line in status:
                if line.startswith("voluntary_ctxt_switches:"):
                    woke += int(line.split()[1])
    with open(f"/proc/{pid}/stat") as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    cpu_ms = (int(fields[11]) + int(fields[12])) * 1000 / os.sysconf("SC_CLK_TCK")
    return woke, cpu_ms, len(os.listdir(tasks))
