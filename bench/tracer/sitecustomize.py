"""Loaded by every Python process started with this folder on PYTHONPATH (see trace_refresh_path.py).

Records, in order, the snaprepl modules whose functions run, and for every database statement a
snaprepl function sends (a DB-API ``execute``/``executemany``/``copy_expert``, or Spark's JDBC
``save``/``jdbc``), the chain of snaprepl modules on the call stack, from the entry point down to
the caller. Writes them to ``$SNAPREPL_TRACE_DIR/<pid>.txt`` at exit. Module bodies run by imports
are not counted, nor anything they call while a module is being imported.
"""

import atexit
import os
import sys
import threading

_out = os.environ.get("SNAPREPL_TRACE_DIR")
_STATEMENTS = {"execute", "executemany", "copy_expert", "save", "jdbc"}
if _out:
    _seen: list[str] = []
    _chains: list[str] = []

    def _chain(frame):  # type: ignore[no-untyped-def]
        chain: list[str] = []
        while frame is not None:
            name = frame.f_globals.get("__name__", "")
            if name.startswith("snaprepl") and (not chain or chain[-1] != name):
                chain.append(name)
            frame = frame.f_back
        return " ".join(chain[::-1])

    def _ours(frame):  # type: ignore[no-untyped-def]
        return frame is not None and frame.f_globals.get("__name__", "").startswith("snaprepl")

    def _importing(frame):  # type: ignore[no-untyped-def]
        while frame is not None:
            if frame.f_code.co_name == "<module>" and frame.f_globals.get("__name__") != "__main__":
                return True
            frame = frame.f_back
        return False

    def _profile(frame, event, arg):  # type: ignore[no-untyped-def]
        if event == "call" and frame.f_code.co_name != "<module>":
            name = frame.f_globals.get("__name__", "")
            if name.startswith("snaprepl") and not _importing(frame):
                if not _seen or _seen[-1] != name:
                    _seen.append(name)
            elif frame.f_code.co_name in _STATEMENTS and _ours(frame.f_back):
                _chains.append(_chain(frame.f_back))
        elif event == "c_call" and getattr(arg, "__name__", "") in _STATEMENTS and _ours(frame):
            _chains.append(_chain(frame))

    sys.setprofile(_profile)
    threading.setprofile(_profile)

    @atexit.register
    def _dump() -> None:
        sys.setprofile(None)
        with open(os.path.join(_out, f"{os.getpid()}.txt"), "w") as handle:
            handle.write("\n".join([" ".join(sys.argv[:3]), *_seen, "--statements--", *_chains]) + "\n")
