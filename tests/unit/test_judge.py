"""The publisher's judgement of one pulled change (SEMANTICS section 6), as a pure function."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import pytest

from snaprepl.bidir.judge import Change, judge
from snaprepl.bidir.resolvers import Decision, average, build, by_max, by_min, decide
from snaprepl.errors import InvalidArgument

PUB, SUB = "pub", "sub"


def row(version: str, price: str = "1.00", name: str = "n") -> dict[str, Any]:
    return {"id": 1, "name": name, "price": Decimal(price), "ROWGUID": version}


def verdict_of(change: Change, current: dict[str, Any] | None, resolvers: dict | None = None, **kwargs: Any) -> Any:
    return judge(
        change,
        current,
        resolvers or {},
        origin=SUB,
        publisher=PUB,
        key_columns=["id"],
        new_version=lambda: "pub@new",
        **kwargs,
    )


@pytest.mark.parametrize(
    ("change", "current", "action", "origin", "conflict", "decision"),
    [
        # insert: no row -> apply; same version -> already there; another row -> uniqueness conflict
        (Change("I", (1,), None, row("sub@1")), None, "write", SUB, None, None),
        (Change("I", (1,), None, row("sub@1")), row("sub@1"), "noop", "", None, None),
        (Change("I", (1,), None, row("sub@1")), row("pub@1"), "reassert", PUB, "I", Decision.PUBLISHER_WINS),
        # update: based on the publisher's version -> apply; on another -> update conflict
        (Change("U", (1,), "pub@1", row("sub@2")), row("pub@1"), "write", SUB, None, None),
        (Change("U", (1,), "pub@0", row("sub@2")), row("pub@1"), "reassert", PUB, "U", Decision.PUBLISHER_WINS),
        (Change("U", (1,), "pub@1", row("sub@2")), row("sub@2"), "noop", "", None, None),
        # update of a row the publisher no longer has -> delete conflict, ignored by default
        (Change("U", (1,), "pub@1", row("sub@2")), None, "ignore", "", "D", Decision.IGNORE),
        # delete: of the publisher's version -> apply; of another, or of a missing row -> delete conflict
        (Change("D", (1,), "pub@1", None, "sub@d"), row("pub@1"), "delete", SUB, None, None),
        (Change("D", (1,), "pub@0", None, "sub@d"), row("pub@1"), "ignore", "", "D", Decision.IGNORE),
        (Change("D", (1,), "pub@1", None, "sub@d"), None, "ignore", "", "D", Decision.IGNORE),
        # an update whose row was deleted before the pull read it is a delete
        (Change("U", (1,), "pub@1", None, "sub@u"), row("pub@1"), "delete", SUB, None, None),
    ],
)
def test_default_rules(change, current, action, origin, conflict, decision) -> None:
    verdict = verdict_of(change, current)
    assert (verdict.action, verdict.origin, verdict.conflict, verdict.decision) == (action, origin, conflict, decision)


def test_a_delete_already_applied_is_recognised_by_its_tombstone() -> None:
    change = Change("D", (1,), "pub@1", None, "sub@d")
    assert verdict_of(change, None, tombstone="sub@d").action == "noop"
    assert verdict_of(change, None, tombstone="other@d").conflict == "D"


def test_resolvers_run_in_order_until_one_decides() -> None:
    calls: list[str] = []

    def undecided(r: dict, origin: str, current: dict | None) -> int:
        calls.append("first")
        return 0

    def subscriber(r: dict, origin: str, current: dict | None) -> int:
        calls.append("second")
        assert origin == SUB and current is not None and current["ROWGUID"] == "pub@1"
        return 1

    never = pytest.fail
    resolvers = {"U": [("first", undecided), ("second", subscriber), ("third", never)]}
    verdict = verdict_of(Change("U", (1,), "pub@0", row("sub@2")), row("pub@1"), resolvers)
    assert calls == ["first", "second"]
    assert (verdict.action, verdict.origin, verdict.row["ROWGUID"], verdict.resolver) == (
        "write",
        SUB,
        "sub@2",
        "second",
    )


def test_code_2_applies_the_changed_row_as_a_new_publisher_version() -> None:
    def cheaper(r: dict, origin: str, current: dict | None) -> int:
        r["price"] = min(r["price"], current["price"])
        return 2

    verdict = verdict_of(
        Change("U", (1,), "pub@0", row("sub@2", "5.00", "theirs")), row("pub@1", "3.00"), {"U": [("c", cheaper)]}
    )
    assert verdict.action == "write" and verdict.origin == PUB, "everyone, the originator too, receives it"
    assert verdict.row == {"id": 1, "name": "theirs", "price": Decimal("3.00"), "ROWGUID": "pub@new"}


def test_subscriber_wins_a_delete_conflict_of_an_update_by_inserting_its_row() -> None:
    verdict = verdict_of(Change("U", (1,), "pub@1", row("sub@2")), None, {"D": [("s", build("sub_wins", "", None))]})
    assert (verdict.action, verdict.origin, verdict.row["ROWGUID"]) == ("write", SUB, "sub@2")
    gone = verdict_of(
        Change("D", (1,), "pub@0", None, "sub@d"), row("pub@1"), {"D": [("s", build("sub_wins", "", None))]}
    )
    assert gone.action == "delete"
    kept = verdict_of(
        Change("D", (1,), "pub@0", None, "sub@d"), row("pub@1"), {"D": [("p", build("pub_wins", "", None))]}
    )
    assert (kept.action, kept.origin) == ("reassert", PUB)


def test_generated_resolvers() -> None:
    cheap, dear = row("sub@1", "1.00"), row("pub@1", "2.00")
    assert by_min("price")(dict(cheap), SUB, dear) == Decision.SUBSCRIBER_WINS
    assert by_min("price")(dict(dear), SUB, cheap) == Decision.PUBLISHER_WINS
    assert by_max("price")(dict(cheap), SUB, dear) == Decision.PUBLISHER_WINS
    assert by_min("price")(dict(cheap), SUB, dict(cheap)) == Decision.UNDECIDED, "equal values leave it open"
    incoming = dict(cheap)
    assert average("price")(incoming, SUB, dear) == Decision.SUBSCRIBER_WINS_CHANGED
    assert incoming["price"] == Decimal("1.50")
    whole = {"id": 1, "qty": 3}
    assert average("qty")(whole, SUB, {"id": 1, "qty": 4}) == Decision.SUBSCRIBER_WINS_CHANGED
    assert whole["qty"] == 4 and isinstance(whole["qty"], int)


def test_defaults_and_bad_codes() -> None:
    assert decide([], {}, SUB, None, "I") == (Decision.PUBLISHER_WINS, "default")
    assert decide([], {}, SUB, None, "U") == (Decision.PUBLISHER_WINS, "default")
    assert decide([], {}, SUB, None, "D") == (Decision.IGNORE, "default")
    with pytest.raises(InvalidArgument, match="returned 'yes', not a code 0-4"):
        decide([("bad", lambda r, o, c: "yes")], {}, SUB, None, "U")
