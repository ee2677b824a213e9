# ptydrv.py STEPS CMD...: run CMD on a new pseudo-terminal.  STEPS is a list of
# "EXPECT=>SEND" separated by "|": wait until the output since the last send
# contains EXPECT, then type SEND and a newline ("^C" types an interrupt).
# Prints everything CMD wrote; exits with CMD's exit status.
import os, pty, select, sys, time
steps = [s.split("=>", 1) for s in sys.argv[1].split("|")] if sys.argv[1] else []
pid, fd = pty.fork()
if pid == 0:
    os.execvp(sys.argv[2], sys.argv[2:])
out, pending, deadline = b"", b"", time.time() + 60
while True:
    if time.time() > deadline:
        os.kill(pid, 9)
        out += b"\n[ptydrv: timed out]\n"
        break
    r, _, _ = select.select([fd], [], [], 0.1)
    if not r:
        continue
    try:
        d = os.read(fd, 4096)
    except OSError:
        break
    if not d:
        break
    out += d
    pending += d
    if steps and steps[0][0].encode() in pending:
        time.sleep(0.1)
        send = steps.pop(0)[1]
        os.write(fd, b"\x03" if send == "^C" else send.encode() + b"\n")
        pending = b""
_, st = os.waitpid(pid, 0)
sys.stdout.buffer.write(out)
sys.exit(os.waitstatus_to_exitcode(st) & 0xff if os.WIFEXITED(st) else 128 + os.WTERMSIG(st))
