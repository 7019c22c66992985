"""A key or token file that other users may read is said on stderr in one line with its fix (issue 32 item 7)."""

from __future__ import annotations

from hybridsim.coordinator.cli.certs import make_certificates
from hybridsim.wire.security import SiteTLS, read_token


def test_a_token_or_key_readable_by_others_is_warned_and_a_private_one_is_not(tmp_path, capsys):
    make_certificates(tmp_path, ["story1"], tokens=True)  # keys and tokens 0600
    token, key, cert = tmp_path / "story1.token", tmp_path / "story1.key", tmp_path / "story1.crt"
    assert read_token(token, "--token-file")
    SiteTLS.from_files(cert, key, None)
    assert capsys.readouterr().err == ""
    token.chmod(0o644)
    key.chmod(0o640)
    assert read_token(token, "--token-file")
    SiteTLS.from_files(cert, key, None)
    err = capsys.readouterr().err.splitlines()
    assert err == [f"hybridsim: warning: --token-file: {token} may be read by other users (mode 0644); chmod 600 {token}",
                   f"hybridsim: warning: --tls-key: {key} may be read by other users (mode 0640); chmod 600 {key}"]
