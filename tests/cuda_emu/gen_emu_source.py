#!/usr/bin/env python3
"""gen_emu_source.py IN.cu OUT.cpp — rewrites every kernel launch of a CUDA source for the CPU
emulator (emu.hpp): `kernel<<<grid, block[, shm[, stream]]>>>(args);` becomes
`::emu::launch("file:line", dim3(grid), dim3(block), [&] { kernel(args); });`. Everything else is
left as it is; the emulator's headers stand in for the CUDA runtime and cuBLAS. Fails loudly
when a `<<<` is left that it could not rewrite."""
import os
import re
import sys

LAUNCH = re.compile(r"(\b[A-Za-z_]\w*(?:<[^<>;]*>)?)\s*<<<")


def split_top(text, start, close):
    """Splits text from start up to the `close` token at depth 0 on top-level commas."""
    parts, depth, cur, i = [], 0, [], start
    while i < len(text):
        if depth == 0 and text.startswith(close, i):
            parts.append("".join(cur).strip())
            return parts, i + len(close)
        c = text[i]
        if c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
        if c == "," and depth == 0:
            parts.append("".join(cur).strip())
            cur = []
        else:
            cur.append(c)
        i += 1
    raise SystemExit("gen_emu_source: unterminated launch")


def main():
    src, out = sys.argv[1], sys.argv[2]
    text = open(src, encoding="utf-8").read()
    name = os.path.basename(src)
    res, pos, count = [], 0, 0
    for m in LAUNCH.finditer(text):
        if m.start() < pos:
            continue
        config, after = split_top(text, m.end(), ">>>")
        if text[after:].lstrip()[:1] != "(":
            raise SystemExit(f"gen_emu_source: {name}: no argument list after a launch")
        open_paren = text.index("(", after)
        args, end = split_top(text, open_paren + 1, ")")
        line = text.count("\n", 0, m.start()) + 1
        res.append(text[pos:m.start()])
        res.append(f'::emu::launch("{name}:{line}", dim3({config[0]}), dim3({config[1]}), '
                   f"[&] {{ {m.group(1)}({', '.join(a for a in args if a)}); }})")
        pos = end
        count += 1
    res.append(text[pos:])
    result = "".join(res)
    if "<<<" in result:
        raise SystemExit(f"gen_emu_source: {name}: a launch was left unrewritten")
    with open(out, "w", encoding="utf-8") as f:
        f.write(f"// Generated from {name} by tests/cuda_emu/gen_emu_source.py ({count} launches). "
                "Do not edit.\n")
        f.write(result)


main()
