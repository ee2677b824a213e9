# ptystop.py SIGNAL CMD...: run CMD on a new pseudo-terminal; when it stops
# itself (the test build's PQVAULT_TEST_STOP_AT: SIGSTOP at a known point),
# send it SIGNAL (a name: INT, TERM, ...) and SIGCONT, and read on until it
# ends.  No timing assumption: the stop is seen in /proc/PID/stat.  Prints
# everything CMD wrote; exits with CMD's exit status (128 + N for a signal).
import os, pty, select, signal, sys, time
sig = getattr(signal, "SIG" + sys.argv[1])
pid, fd = pty.fork()
if pid == 0:
    os.execvp(sys.argv[2], sys.argv[2:])


def state():
    try:
        with open("/proc/%d/stat" % pid) as f:
            return f.read().rsplit(")", 1)[1].split()[0]
    except OSError:
        return None


out, deadline, sent = b"", time.time() + 120, False
while True:
    if time.time() > deadline:
        os.kill(pid, 9)
        out += b"\n[ptystop: timed out]\n"
        break
    if not sent and state() == "T":
        os.kill(pid, sig)
        os.kill(pid, signal.SIGCONT)
        sent = True
    r, _, _ = select.select([fd], [], [], 0.05)
    if not r:
        continue
    try:
        d = os.read(fd, 4096)
    except OSError:
        break
    if not d:
        break
    out += d
_, st = os.waitpid(pid, 0)
if not sent:
    out += b"\n[ptystop: the command never stopped]\n"
sys.stdout.buffer.write(out)
sys.exit(os.waitstatus_to_exitcode(st) & 0xff if os.WIFEXITED(st) else 128 + os.WTERMSIG(st))
