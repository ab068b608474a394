"""The package's Swift compile commands as SwiftPM ran them, for scripts that compile the sources
again differently (scripts/check-availability, scripts/check-darwin-typecheck): read from the
llbuild manifest of the last debug build (.build/debug.yaml)."""
import json
import os
import re


def module_commands(root, build_dir):
    """[{name, args, sources, deps}] for each of the package's own Swift modules (every source in
    the repository, none generated under .build), or None when there is no debug build. `deps`
    are the names of the modules whose .swiftmodule the command reads."""
    manifest = os.path.join(build_dir, "debug.yaml")
    if not os.path.exists(manifest):
        return None
    own = []
    current, inputs = None, []
    for line in open(manifest, encoding="utf-8"):
        if re.match(r'\s+"C\.(.+)-debug\.module":', line):
            current, inputs = True, []
            continue
        if not current:
            continue
        stripped = line.strip()
        if stripped.startswith("inputs:"):
            inputs = json.loads(stripped[len("inputs:"):])
        elif stripped.startswith("args:"):
            args = json.loads(stripped[len("args:"):])
            sources = [f for f in inputs if f.endswith(".swift")]
            if sources and "-module-name" in args and all(
                    f.startswith(root + os.sep) and not f.startswith(build_dir + os.sep) for f in sources):
                own.append({
                    "name": args[args.index("-module-name") + 1],
                    "args": args,
                    "sources": sources,
                    "deps": [os.path.basename(f)[:-len(".swiftmodule")] for f in inputs if f.endswith(".swiftmodule")],
                })
            current = None
    return own


# Arguments of a SwiftPM compile command that produce its outputs; a re-compile drops them.
DROP_FLAGS = {"-emit-dependencies", "-emit-module", "-incremental", "-c", "-enable-batch-mode",
              "-serialize-diagnostics", "-parseable-output", "-emit-objc-header"}
DROP_WITH_VALUE = {"-emit-module-path", "-output-file-map", "-index-store-path", "-emit-objc-header-path", "-j"}


def input_args(args, sources=None):
    """`args` without the outputs (the compiler path first), ready for -typecheck or a new
    -emit-module; with `sources`, the module's @sources file list is replaced by them."""
    out, skip, keep = [args[0]], False, False
    for a in args[1:]:
        if skip:
            skip = False
            continue
        if keep:  # the value of -Xcc/-Xfrontend passes through unchanged
            keep = False
            out.append(a)
            continue
        if a in ("-Xcc", "-Xfrontend", "-Xlinker"):
            keep = True
        elif a in DROP_WITH_VALUE:
            skip = True
            continue
        elif a in DROP_FLAGS or re.match(r"-j\d+$", a):
            continue
        elif sources is not None and a.startswith("@") and a.endswith("/sources"):
            out += sources
            continue
        out.append(a)
    return out
