"""The recipient side of the `gpucrypt` command (issue 36): keygen (an identity) / --pq / -y,
encrypt -r / -R / --allow-classic, decrypt -i, --passphrase-fd, inspect. Every refusal is one
`gpucrypt: error:` line, a non-zero exit and no output file."""

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from test_cli import one_error_line, run

from gpucrypt import fileformat

VECTORS = Path(__file__).resolve().parent / "vectors" / "gcx-v2"
ENTRY = [sys.executable, "-c", "from gpucrypt.__main__ import main; main()"]


@pytest.fixture
def work(tmp_path):
    (tmp_path / "plain").write_bytes(os.urandom(200_000))
    return tmp_path


def keygen(work, name, *flags):
    result = run(["keygen", *flags, "-o", str(work / name)])
    assert result.exit_code == 0, result.stderr
    return result.stdout.strip()


def refused(result, output=None):
    assert result.exit_code == 1, (result.stdout, result.stderr)
    line = one_error_line(result.stderr)
    assert output is None or not Path(output).exists()
    return line


def test_keygen_identity_prints_its_recipient_and_is_private(work):
    recipient = keygen(work, "id")             # bare keygen makes an identity, as age-keygen does
    assert recipient.startswith("gpucrypt-x25519:")
    assert stat.S_IMODE(os.stat(work / "id").st_mode) == 0o600
    assert run(["keygen", "-y", str(work / "id")]).stdout.strip() == recipient
    assert f"# recipient: {recipient}" in (work / "id").read_text()
    pq = keygen(work, "pq", "--pq")
    assert pq.startswith("gpucrypt-mlkem768x25519:") and len(pq) > 1600
    assert run(["keygen", "-y", str(work / "pq")]).stdout.strip() == pq


def test_keygen_refusals(work):
    keygen(work, "id")
    assert run(["keygen", "-o", str(work / "id")]).exit_code != 0      # no --force: kept
    assert keygen(work, "id2", "--identity").startswith("gpucrypt-x25519:")   # the old spelling still works
    for flags in (["--pq", "--raw"], ["--raw"], ["--symmetric", "--pq"], ["--symmetric", "--identity"]):
        result = run(["keygen", *flags, "-o", str(work / "x")])
        assert result.exit_code == 2 and not (work / "x").exists(), flags
    assert run(["keygen", "-y", str(work / "id"), "-o", str(work / "x")]).exit_code == 2
    assert "not a text file of keys" in refused(run(["keygen", "-y", str(work / "plain")]))
    (work / "empty").write_text("# nothing\n")
    assert "no identity in the file" in refused(run(["keygen", "-y", str(work / "empty")]))


def test_encrypt_to_recipients_and_decrypt_with_identities(work):
    alice = keygen(work, "alice")
    carol = keygen(work, "carol", "--pq")
    dave = keygen(work, "dave", "--pq")
    (work / "team.txt").write_text(f"# the team\n{dave}\n\n")
    result = run(["encrypt", "-r", carol, "-R", str(work / "team.txt"), str(work / "plain"), "-o", str(work / "c")])
    assert result.exit_code == 0, result.stderr
    for identity in ("carol", "dave"):
        out = work / f"out-{identity}"
        assert run(["decrypt", "-i", str(work / "alice"), "-i", str(work / identity), str(work / "c"),
                    "-o", str(out)]).exit_code == 0
        assert out.read_bytes() == (work / "plain").read_bytes()
    assert "no identity given matches" in refused(run(["decrypt", "-i", str(work / "alice"), str(work / "c"),
                                                       "-o", str(work / "x")]), work / "x")
    assert "give -i IDENTITY_FILE" in refused(run(["decrypt", str(work / "c"), "-o", str(work / "x")]), work / "x")
    single = run(["encrypt", "-r", alice, str(work / "plain"), "-o", str(work / "a")])
    assert single.exit_code == 0 and fileformat.parse_header((work / "a").read_bytes()).version == 2


def test_post_quantum_and_classic_recipients_mix_only_when_asked(work):
    alice, carol = keygen(work, "alice"), keygen(work, "carol", "--pq")
    line = refused(run(["encrypt", "-r", alice, "-r", carol, str(work / "plain"), "-o", str(work / "c")]), work / "c")
    assert "only as strong as X25519" in line and "--allow-classic" in line
    assert run(["encrypt", "--allow-classic", "-r", alice, "-r", carol, str(work / "plain"),
                "-o", str(work / "c")]).exit_code == 0
    report = json.loads(run(["inspect", "--json", str(work / "c")]).stdout)
    assert report["stanzas"] == ["x25519", "mlkem768x25519"] and report["post_quantum"] is False


def test_work_factor_needs_a_passphrase_beside_recipients(work):
    alice = keygen(work, "alice")
    result = run(["encrypt", "-r", alice, "--work-factor", "12", str(work / "plain"), "-o", str(work / "c")])
    assert result.exit_code == 2 and "recipients alone take none" in result.stderr and not (work / "c").exists()


def test_bad_recipients_name_what_is_wrong(work):
    alice = keygen(work, "alice")
    assert "checksum" in refused(run(["encrypt", "-r", alice[:-2] + "AA", str(work / "plain"), "-o", str(work / "c")]),
                                 work / "c")
    assert "identity" in refused(run(["encrypt", "-r", (work / "alice").read_text().split()[-1],
                                      str(work / "plain"), "-o", str(work / "c")]), work / "c")
    (work / "list").write_text("nonsense\n")
    assert f"{work / 'list'}, line 1" in refused(run(["encrypt", "-R", str(work / "list"), str(work / "plain"),
                                                     "-o", str(work / "c")]), work / "c")


def test_passphrase_fd_and_recipients_with_a_passphrase(work):
    alice = keygen(work, "alice")
    read_end, write_end = os.pipe()
    os.write(write_end, b"hunter2\n")
    os.close(write_end)
    try:
        result = subprocess.run([*ENTRY, "encrypt", "--work-factor", "10", "-r", alice, "--passphrase-fd",
                                 str(read_end), str(work / "plain"), "-o", str(work / "c")],
                                pass_fds=(read_end,), capture_output=True, timeout=120)
    finally:
        os.close(read_end)
    assert result.returncode == 0, result.stderr
    header = fileformat.parse_header((work / "c").read_bytes())
    assert [stanza.name for stanza in header.stanzas] == ["x25519", "scrypt"]
    read_end, write_end = os.pipe()
    os.write(write_end, b"hunter2\n")
    os.close(write_end)
    try:
        result = subprocess.run([*ENTRY, "decrypt", "--passphrase-fd", str(read_end), str(work / "c"),
                                 "-o", str(work / "p")], pass_fds=(read_end,), capture_output=True, timeout=120)
    finally:
        os.close(read_end)
    assert result.returncode == 0, result.stderr
    assert (work / "p").read_bytes() == (work / "plain").read_bytes()
    assert run(["decrypt", "-i", str(work / "alice"), str(work / "c"), "-o", str(work / "q")]).exit_code == 0


def test_version_1_files_refuse_identities(work):
    keygen(work, "alice")
    key = work / "key"
    assert run(["keygen", "--symmetric", "-o", str(key)]).exit_code == 0
    assert run(["encrypt", "--key-file", str(key), str(work / "plain"), "-o", str(work / "c")]).exit_code == 0
    assert "-i does not apply" in refused(run(["decrypt", "-i", str(work / "alice"), str(work / "c"),
                                               "-o", str(work / "x")]), work / "x")


@pytest.mark.parametrize("name", ["x25519.gcx", "mixed.gcx", "scrypt.gcx", "empty.gcx", "copied-stanza.gcx"])
def test_inspect_the_published_vectors(name):
    report = json.loads(run(["inspect", "--json", str(VECTORS / name)]).stdout)
    header = fileformat.parse_header((VECTORS / name).read_bytes())
    assert report["version"] == 2 and report["stanzas"] == [stanza.name for stanza in header.stanzas]
    assert report["sizes"]["header"] == header.length
    assert report["sizes"]["file"] == (VECTORS / name).stat().st_size
    text = run(["inspect", str(VECTORS / name)]).stdout
    assert "format version 2" in text and "post-quantum" in text


def test_inspect_reads_no_body_and_needs_no_key(work):
    """A 64 MiB file whose body is all zeros (it would fail every chunk): inspect reads only the
    header, so it answers at once and says what the length implies."""
    alice = keygen(work, "alice")
    assert run(["encrypt", "-r", alice, str(work / "plain"), "-o", str(work / "c")]).exit_code == 0
    header_len = fileformat.parse_header((work / "c").read_bytes()).length
    big = work / "big.gcx"
    with open(big, "wb") as out:
        out.write((work / "c").read_bytes()[:header_len])
        out.truncate(header_len + 1024 * (65536 + 16) + 100)
    report = json.loads(run(["inspect", "--json", str(big)]).stdout)
    assert report["sizes"]["chunks"] == 1025 and report["sizes"]["plaintext"] == 1024 * 65536 + 84
    with open(big, "r+b") as out:
        out.truncate(header_len + 1024 * (65536 + 16))      # the final chunk missing: no file has that length
    report = json.loads(run(["inspect", "--json", str(big)]).stdout)
    assert "chunks" not in report["sizes"] and report["length_problem"].startswith("truncated")
    assert "not a gpucrypt file" in refused(run(["inspect", str(work / "plain")]))


def test_inspect_answers_before_the_command_framework(work):
    """The entry point's shortcut: same answer as the click command, without importing click
    (the 50 ms budget: click and the commands' modules cost about 40)."""
    alice = keygen(work, "alice")
    assert run(["encrypt", "-r", alice, str(work / "plain"), "-o", str(work / "c")]).exit_code == 0
    code = ("import sys\nfrom gpucrypt.__main__ import main\nmain(['inspect', '--json', sys.argv[1]])\n"
            "print('click' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code, str(work / "c")], capture_output=True, text=True,
                         check=True).stdout.splitlines()
    assert out[-1] == "False"
    assert json.loads(out[0]) == json.loads(run(["inspect", "--json", str(work / "c")]).stdout)
    assert json.loads(out[0])["stanzas"] == ["x25519"]


@pytest.mark.parametrize("io_mode", ["positional", "collective", "independent"])
def test_mpi_takes_recipients_in_every_io_mode(work, io_mode):
    """A version 2 file (recipient stanzas: a header of any length) is written and read under --mpi
    in each I/O mode (ranks on one host: positional; across hosts: MPI-IO collective or
    independent rounds, whose chunk offsets are shifted by the header's length beyond version 1's
    80 bytes), both ways against the single process, with a post-quantum recipient too; a wrong
    identity fails in one line and leaves no output."""
    from test_mpi import MPIRUN, mpi
    if MPIRUN is None:
        pytest.skip("mpirun not installed")
    alice = keygen(work, "alice")
    bob = keygen(work, "bob", "--pq")
    (work / "plain").write_bytes(os.urandom(1_300_000 + 17))   # 20 chunks and a ragged one over the ranks
    plaintext = (work / "plain").read_bytes()
    env = {"GPUCRYPT_MPI_IO": io_mode}
    ok = mpi(2, "encrypt", "-r", alice, str(work / "plain"), "-o", str(work / "c"), env=env)
    assert ok.returncode == 0, ok.stderr.decode()
    assert run(["decrypt", "-i", str(work / "alice"), str(work / "c"), "-o", str(work / "back")]).exit_code == 0
    assert (work / "back").read_bytes() == plaintext
    assert run(["encrypt", "-r", bob, str(work / "plain"), "-o", str(work / "pq")]).exit_code == 0
    ok = mpi(3, "decrypt", "-i", str(work / "bob"), str(work / "pq"), "-o", str(work / "pq-back"), env=env)
    assert ok.returncode == 0, ok.stderr.decode()
    assert (work / "pq-back").read_bytes() == plaintext

    assert (work / "c").read_bytes() != b""
    result = mpi(2, "decrypt", "-i", str(work / "bob"), str(work / "c"), "-o", str(work / "out"), env=env)
    assert result.returncode == 1
    errors = [line for line in result.stderr.decode().splitlines() if line.startswith("gpucrypt: error: ")]
    assert len(errors) == 1, result.stderr.decode()   # mpirun adds its own lines
    assert not (work / "out").exists()
