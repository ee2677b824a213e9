#!/usr/bin/env python3
"""mutate.py FILE OP [ARGS] [OP [ARGS]...]: edit FILE in place.

Used by tests/cli/corruption.sh and tests/cli/vectors.sh to derive damaged
files from good ones.  Offsets may be negative (from the end).  Operations:
  flip OFF [MASK]     XOR the byte at OFF with MASK (hex, default 01)
  set OFF HEX         overwrite bytes at OFF with HEX
  zero OFF LEN        overwrite LEN bytes at OFF with zeros
  zeroall             every byte zero (same length)
  truncate LEN        keep the first LEN bytes (negative: drop -LEN bytes)
  append HEX          add bytes at the end
  appendtext TEXT     add text at the end
  replace OLD NEW     replace the first occurrence of text OLD with NEW
  deleteline PREFIX   remove the first line starting with PREFIX
  fixsum              recompute a key file's trailing SHA-256 (last 32 bytes)
  be32 OFF VALUE      store VALUE as a big-endian u32 at OFF
"""
import hashlib
import sys


def off(data, s):
    o = int(s, 0)
    return o + len(data) if o < 0 else o


def main(argv):
    path, ops = argv[1], argv[2:]
    with open(path, 'rb') as f:
        data = bytearray(f.read())
    i = 0
    while i < len(ops):
        op = ops[i]
        i += 1
        if op == 'flip':
            o = off(data, ops[i]); i += 1
            mask = 1
            if i < len(ops) and all(c in '0123456789abcdefABCDEF' for c in ops[i]) and len(ops[i]) == 2:
                mask = int(ops[i], 16); i += 1
            data[o] ^= mask
        elif op == 'set':
            o = off(data, ops[i]); b = bytes.fromhex(ops[i + 1]); i += 2
            data[o:o + len(b)] = b
        elif op == 'zero':
            o = off(data, ops[i]); n = int(ops[i + 1], 0); i += 2
            data[o:o + n] = bytes(n)
        elif op == 'zeroall':
            data = bytearray(len(data))
        elif op == 'truncate':
            n = int(ops[i], 0); i += 1
            data = data[:n] if n >= 0 else data[:len(data) + n]
        elif op == 'append':
            data += bytes.fromhex(ops[i]); i += 1
        elif op == 'appendtext':
            data += ops[i].encode(); i += 1
        elif op == 'replace':
            old, new = ops[i].encode(), ops[i + 1].encode(); i += 2
            k = data.find(old)
            if k < 0:
                sys.exit('mutate.py: %r not found in %s' % (old, path))
            data[k:k + len(old)] = new
        elif op == 'deleteline':
            pre = ops[i].encode(); i += 1
            lines = bytes(data).split(b'\n')
            for k, line in enumerate(lines):
                if line.startswith(pre):
                    del lines[k]
                    break
            else:
                sys.exit('mutate.py: no line %r in %s' % (pre, path))
            data = bytearray(b'\n'.join(lines))
        elif op == 'fixsum':
            data[-32:] = hashlib.sha256(bytes(data[:-32])).digest()
        elif op == 'be32':
            o = off(data, ops[i]); v = int(ops[i + 1], 0); i += 2
            data[o:o + 4] = v.to_bytes(4, 'big')
        else:
            sys.exit('mutate.py: unknown operation %r' % op)
    with open(path, 'wb') as f:
        f.write(data)


if __name__ == '__main__':
    main(sys.argv)
