"""The pull and push lease names, defined once in publications/leases.py for tables and collections alike.

The names are stored in the catalog's lease table while a step runs and read back by ``snaprepl status``
and the operators, so a running job of an older release and a newer reader must agree on them.
"""

from __future__ import annotations

from snaprepl.publications.leases import pull_lease, push_lease, step_lease


def test_the_lease_names_keep_their_stored_form() -> None:
    assert pull_lease("public.t@pub") == "pull:public.t@pub"
    assert push_lease("public.t@pub", "srv1") == "push:public.t@pub:srv1"


def test_a_step_holds_the_pull_lease_only_when_it_pulls() -> None:
    assert step_lease("/docs@dav", "pull", "srv1") == "pull:/docs@dav"
    assert step_lease("/docs@dav", "push", "srv1") == "push:/docs@dav:srv1"
    assert step_lease("/docs@dav", "init", "srv1") == "push:/docs@dav:srv1"
