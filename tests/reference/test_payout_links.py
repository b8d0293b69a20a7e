"""Hosted payout links: the signed token, the secret kept across restarts, and a refusal that keeps its writes."""

from __future__ import annotations

import pytest

from payconform.reference.core.errors import ApiError
from payconform.reference.reference import Config, Reference

from .helpers import OPERATOR_TOKEN


def test_a_token_names_its_link_and_any_change_breaks_it(ref: Reference) -> None:
    token = ref.payout_links.token("plink_abc")
    assert ref.payout_links.verify(token) == "plink_abc"
    for altered in (token[:-1] + ("A" if token[-1] != "A" else "B"), "plink_abd" + token[len("plink_abc"):],
                    "plink_abc", "", "."):
        assert ref.payout_links.verify(altered) is None, altered


def test_the_signing_secret_survives_a_restart(tmp_path) -> None:
    db = str(tmp_path / "ref.db")
    first = Reference(Config(operator_token=OPERATOR_TOKEN, db_path=db))
    token = first.payout_links.token("plink_abc")
    first.close()
    again = Reference(Config(operator_token=OPERATOR_TOKEN, db_path=db))
    try:
        assert again.payout_links.verify(token) == "plink_abc"
    finally:
        again.close()


def test_a_refusal_that_keeps_writes_commits_them(ref: Reference) -> None:
    def refuse(name: str, keeps: bool) -> None:
        with pytest.raises(ApiError), ref.store.tx():
            ref.store.run("INSERT INTO server_secrets (name, value) VALUES (?, 'x')", (name,))
            err = ApiError("PAYOUT_LINK_UNUSABLE")
            err.keeps_writes = keeps
            raise err

    refuse("kept", True)
    refuse("rolled-back", False)
    names = {row["name"] for row in ref.store.all("SELECT name FROM server_secrets")}
    assert "kept" in names and "rolled-back" not in names
