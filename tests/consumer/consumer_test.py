#!/usr/bin/env python3
"""Builds the project in tests/consumer/project, a program that uses tact,
the two ways docs/getting-started.md describes, runs it and checks its
answer. Nothing is installed outside WORK_DIR, which is made afresh and
removed at the end.

  consumer_test.py subproject SOURCE_ROOT WORK_DIR
      tact as a subproject (subprojects/tact links to SOURCE_ROOT), never
      installed; also checks that the subproject builds only the library.
  consumer_test.py installed SOURCE_ROOT WORK_DIR
      tact configured on its own and installed into WORK_DIR/prefix; checks
      the installed headers and pkg-config file, then builds the project
      with Meson finding tact through pkg-config (no fallback), and the
      program alone with g++ and `pkg-config --cflags --libs tact`.

The environment gives the tools: MESON (default meson), CXX (the compiler
of the enclosing build)."""
import json
import os
import pathlib
import shlex
import shutil
import subprocess
import sys

EXPECTED_OUTPUT = "classic 42\ntransactional 42\n"
# Umbrella headers a program includes; everything they reach must be installed.
UMBRELLAS = ["tact/tact.hpp", "tact/transactional.hpp", "tact/widgets.hpp"]
# Generated into the build folder, installed beside the headers.
GENERATED_HEADERS = {"build_config.hpp", "version.hpp"}
# Installed with tact-metrics, which is built only where prometheus-cpp is.
METRICS_HEADER = "metrics.hpp"
# A guard against a program that hangs, so that the test still cleans up; not
# a measure of speed.
PROGRAM_TIME_LIMIT = 300
# Without optimization or debug information the builds of tact here take a
# fraction of the time; the checks stay on, as in a debug build.
FAST_BUILD = ["-Doptimization=0", "-Ddebug=false"]
# The nested builds run beside other tests (meson runs them in parallel):
# two compile jobs, rather than ninja's default of one per core and more.
JOBS = "2"


class Failure(Exception):
    pass


def meson():
    return shlex.split(os.environ.get("MESON", "meson"))


def cxx():
    return shlex.split(os.environ.get("CXX", "c++"))


def run(what, cmd, env=None, timeout=None):
    """Runs cmd; on failure raises Failure saying `what` failed, with the
    command and its output."""
    try:
        proc = subprocess.run(cmd, env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, text=True, timeout=timeout)
    except subprocess.TimeoutExpired as expired:
        raise Failure(f"{what} did not finish within {timeout} s:\n"
                      f"$ {shlex.join(str(c) for c in cmd)}\n{expired.output or ''}") from None
    if proc.returncode != 0:
        raise Failure(f"{what} failed (exit {proc.returncode}):\n"
                      f"$ {shlex.join(str(c) for c in cmd)}\n{proc.stdout}")
    return proc.stdout


def check_answer(what, program, env=None):
    out = run(f"running {what}", [str(program)], env=env, timeout=PROGRAM_TIME_LIMIT)
    if out != EXPECTED_OUTPUT:
        raise Failure(f"{what} printed {out!r}, expected {EXPECTED_OUTPUT!r}")


def copy_project(source_root, work):
    project = work / "project"
    shutil.copytree(source_root / "tests" / "consumer" / "project", project)
    return project


def subproject(source_root, work):
    project = copy_project(source_root, work)
    (project / "subprojects").mkdir()
    (project / "subprojects" / "tact").symlink_to(source_root, target_is_directory=True)
    build = work / "build"
    # Forced, so that a tact installed on this machine cannot stand in.
    run("configuring the project with tact as a subproject",
        meson() + ["setup", str(build), str(project), "--force-fallback-for=tact",
                   "-Dtact:checks=enabled"] + FAST_BUILD)
    targets = json.loads(run("listing the targets", meson() + ["introspect", "--targets", str(build)]))
    extra = [f"{t['name']} ({t['type']})" for t in targets
             if t["subproject"] == "tact" and not t["type"].endswith("library")]
    if extra:
        raise Failure("tact as a subproject must build its library only, not: " + ", ".join(extra))
    if not any(t["subproject"] == "tact" and t["name"] == "tact" for t in targets):
        raise Failure("the project's build has no tact library from the subproject")
    tests = json.loads(run("listing the tests", meson() + ["introspect", "--tests", str(build)]))
    if tests:
        raise Failure("tact as a subproject must register no tests, found: "
                      + ", ".join(t["name"] for t in tests))
    run("building the project and tact as its subproject",
        meson() + ["compile", "-j", JOBS, "-C", str(build)])
    check_answer("the project's program (tact as a subproject)", build / "answer")
    (project / "subprojects" / "tact").unlink()


def installed_files(root):
    return {str(p.relative_to(root)) for p in root.rglob("*") if p.is_file()}


def check_headers(source_root, include_dir, metrics):
    """The install holds every public header and the generated ones, under
    include/tact, and nothing else; the metrics header only with the
    library that implements it (tact-metrics, `metrics`)."""
    public = source_root / "include" / "tact"
    expected = {f"tact/{f}" for f in installed_files(public) if f.endswith(".hpp")}
    expected |= {f"tact/{f}" for f in GENERATED_HEADERS}
    if not metrics:
        expected.discard(f"tact/{METRICS_HEADER}")
    actual = installed_files(include_dir)
    problems = []
    if missing := sorted(expected - actual):
        problems.append("public headers missing from the install: " + ", ".join(missing))
    if unexpected := sorted(actual - expected):
        problems.append("installed headers that are not public ones: " + ", ".join(unexpected))
    if problems:
        raise Failure("\n".join(problems))


def check_reached_headers(work, include_dir, cflags):
    """Every tact header the umbrellas include comes from the install, so a
    program needs nothing from the source tree."""
    source = work / "umbrellas.cpp"
    source.write_text("".join(f"#include <{h}>\n" for h in UMBRELLAS))
    deps = run("preprocessing the umbrella headers against the install",
               cxx() + ["-std=c++20", "-M"] + cflags + [str(source)])
    headers = [pathlib.Path(h) for h in deps.replace("\\\n", " ").split()[2:]]
    inside = [h for h in headers if include_dir.resolve() in h.resolve().parents]
    if len(inside) < len(UMBRELLAS):
        raise Failure("the umbrella headers did not come from the install:\n" + deps)
    outside = [str(h) for h in headers if h not in inside and h.suffix == ".hpp" and "tact" in h.parts]
    if outside:
        raise Failure("tact headers found outside the install: " + ", ".join(outside))


def pkg_config(env, *args):
    cmd = ["pkg-config", *args, "tact"]
    return run(shlex.join(cmd), cmd, env=env)


def check_pkg_config(env, static):
    """Returns the flags that link a program with the installed tact, after
    checking that they name every library tact needs."""
    # A static libtact needs its dependencies on every link line, so the
    # file must list them as public; a shared one carries them itself, and
    # lists them for static links only.
    libs = pkg_config(env, "--libs").split()
    listed = libs if static else pkg_config(env, "--libs", "--static").split()
    wanted = {
        "libtact": "-ltact" in listed,
        "threads": "-pthread" in listed or "-lpthread" in listed,
        "hwloc": "-lhwloc" in listed,
        "boost_context": any("boost_context" in f for f in listed),
    }
    missing = [name for name, found in wanted.items() if not found]
    if missing:
        raise Failure(f"the link flags tact.pc gives lack {', '.join(missing)}: {' '.join(listed)}")
    requires = pkg_config(env, "--print-requires").split()
    if not static:
        requires += pkg_config(env, "--print-requires-private").split()
    if "hwloc" not in requires:
        raise Failure(f"tact.pc does not require hwloc ({'Requires' if static else 'Requires.private'})")
    return libs


def installed(source_root, work):
    prefix = work / "prefix"
    tact_build = work / "tact-build"
    run("configuring tact on its own",
        meson() + ["setup", str(tact_build), str(source_root), f"--prefix={prefix}",
                   "-Dtests=disabled", "-Dexamples=disabled", "-Dbenchmarks=disabled",
                   "-Dchecks=enabled"] + FAST_BUILD)
    run("building tact", meson() + ["compile", "-j", JOBS, "-C", str(tact_build)])
    run("installing tact", meson() + ["install", "-C", str(tact_build), "--no-rebuild"])

    pc_files = list(prefix.rglob("pkgconfig/tact.pc"))
    if len(pc_files) != 1:
        raise Failure(f"expected one installed tact.pc under the prefix, found {len(pc_files)}")
    libdir = pc_files[0].parent.parent
    static = (libdir / "libtact.a").is_file()
    if not static and not (libdir / "libtact.so").exists():
        raise Failure(f"no libtact.a or libtact.so installed in {libdir}")
    check_headers(source_root, prefix / "include", any(prefix.rglob("pkgconfig/tact-metrics.pc")))

    # LD_LIBRARY_PATH: for a shared libtact, which the prefix keeps off the
    # loader's path.
    env = dict(os.environ, PKG_CONFIG_PATH=str(pc_files[0].parent), LD_LIBRARY_PATH=str(libdir))
    env.pop("PKG_CONFIG_LIBDIR", None)
    libs = check_pkg_config(env, static)
    cflags = pkg_config(env, "--cflags").split()
    check_reached_headers(work, prefix / "include", cflags)

    # The project with Meson: without a subprojects folder and with
    # fallbacks off, only pkg-config can provide tact.
    project = copy_project(source_root, work)
    build = work / "build"
    run("configuring the project against the installed tact",
        meson() + ["setup", str(build), str(project), "--wrap-mode=nofallback"], env=env)
    run("building the project against the installed tact",
        meson() + ["compile", "-j", JOBS, "-C", str(build)], env=env)
    check_answer("the project's program (installed tact, Meson)", build / "answer", env)

    # The program alone, with nothing but what pkg-config says.
    program = work / "answer-gxx"
    run("compiling the program with g++ and pkg-config",
        cxx() + ["-std=c++20", "-Wall", "-Wextra", "-Wpedantic", "-Werror"] + cflags
        + [str(project / "answer.cpp"), "-o", str(program)] + libs)
    check_answer("the program (installed tact, g++ and pkg-config)", program, env)
    check_version(work, cflags, libs, env)


def check_version(work, cflags, libs, env):
    """The headers' version macros, the library's version() and tact.pc
    all give the project's version."""
    source = work / "version.cpp"
    source.write_text(
        "#include <cstdio>\n#include <tact/tact.hpp>\n"
        "static_assert(TACT_VERSION == TACT_VERSION_MAJOR * 10000 + TACT_VERSION_MINOR * 100 +"
        " TACT_VERSION_PATCH);\n"
        "int main() { std::printf(\"%s %s\\n\", TACT_VERSION_STRING, tact::version().text); }\n")
    program = work / "version"
    run("compiling the version check", cxx() + ["-std=c++20"] + cflags + [str(source), "-o", str(program)] + libs)
    wanted = pkg_config(env, "--modversion").strip()
    out = run("running the version check", [str(program)], env=env, timeout=PROGRAM_TIME_LIMIT).split()
    if out != [wanted, wanted]:
        raise Failure(f"headers and library say version {out}, tact.pc says {wanted}")


def main(argv):
    modes = {"subproject": subproject, "installed": installed}
    if len(argv) != 4 or argv[1] not in modes:
        print(__doc__, file=sys.stderr)
        return 2
    source_root = pathlib.Path(argv[2]).resolve()
    work = pathlib.Path(argv[3]).resolve()
    shutil.rmtree(work, ignore_errors=True)  # left by an interrupted run
    work.mkdir(parents=True)
    try:
        modes[argv[1]](source_root, work)
    except Failure as failure:
        print(f"FAIL ({argv[1]}): {failure}")
        return 1
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(f"ok ({argv[1]}): the project built against tact and printed the expected answer")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
