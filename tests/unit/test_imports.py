"""No import cycles among snaprepl's modules, counting imports inside functions (grimp's graph has them all)."""

from __future__ import annotations

from graphlib import CycleError, TopologicalSorter

import grimp


def test_snaprepl_modules_import_without_cycles() -> None:
    graph = grimp.build_graph("snaprepl")
    sorter = TopologicalSorter({module: graph.find_modules_directly_imported_by(module) for module in graph.modules})
    try:
        sorter.prepare()
    except CycleError as error:
        cycle = error.args[1]
        raise AssertionError("import cycle: " + " -> ".join(cycle)) from None
