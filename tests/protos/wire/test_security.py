"""hybridsim.wire.security: which addresses count as loopback, which tokens a site accepts."""

from __future__ import annotations

import grpc
import pytest

from hybridsim.wire.security import CredentialError, SiteAccess, TokenGuard, is_loopback, read_token


@pytest.mark.parametrize("address, loopback", [
    ("127.0.0.1:50051", True), ("127.3.2.1:0", True), ("localhost:1", True), ("[::1]:50051", True),
    ("0.0.0.0:50051", False), ("[::]:0", False), ("10.0.0.7:50051", False), ("lab.example.org:50051", False),
    ("localhost.example.org:1", False), ("127.0.0.1.example.org:1", False),
])
def test_loopback_addresses(address, loopback):
    assert is_loopback(address) is loopback
    assert (SiteAccess().listen_refusal(address) is None) is loopback


@pytest.mark.parametrize("text, ok", [("a" * 32, True), ("a" * 32 + "\n# comment\n", True), ("  " + "b" * 40 + "  ", True),
                                      ("a" * 31, False), ("a" * 16 + " " + "a" * 16, False), ("", False),
                                      ("é" * 40, False)])
def test_a_token_file_holds_one_long_printable_token(tmp_path, text, ok):
    path = tmp_path / "site.token"
    path.write_text(text)
    if ok:
        assert read_token(path, "--token-file") == text.split("\n")[0].strip()
    else:
        with pytest.raises(CredentialError, match="must hold one token of at least 32 printable ASCII characters"):
            read_token(path, "--token-file")


class Details:
    method = "/hybridsim.v1.Module/Echo"

    def __init__(self, *metadata: tuple[str, str]) -> None:
        self.invocation_metadata = metadata


@pytest.mark.parametrize("metadata, passes", [
    ((("authorization", "Bearer " + "k" * 40),), True),
    ((("x-other", "1"), ("authorization", "Bearer " + "k" * 40)), True),
    ((), False), ((("authorization", "k" * 40),), False), ((("authorization", "Bearer " + "k" * 39),), False),
    ((("authorization", "Bearer " + "k" * 41),), False), ((("authorization", "bearer " + "k" * 40),), False),
])
def test_the_guard_passes_only_the_exact_bearer_token(metadata, passes):
    guard = TokenGuard("k" * 40, "left")
    module_handler = grpc.unary_unary_rpc_method_handler(lambda request, context: request)
    handler = guard.intercept_service(lambda details: module_handler, Details(*metadata))
    assert (handler is module_handler) is passes
    assert guard.refused == (0 if passes else 1)
