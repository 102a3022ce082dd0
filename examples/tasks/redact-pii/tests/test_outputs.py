import hashlib
from pathlib import Path

import pytest
from agentcall import agent_folder, run_agent  # the agent's program runs as nobody, never in this process

SCRIPT = "/app/redact.py"
TICKETS = Path("/app/tickets.txt")
TICKETS_SHA256 = "a7fa99c5a8dd3ebfe3dd37574385837aa7133797405c3e7b72945b796dd90386"
#: The agent's program runs as nobody (run_agent): the expected answers, next to these tests, are out of its reach.
EXPECTED = Path(__file__).with_name("tickets_redacted_expected.txt")


def readable_copy(data: bytes) -> Path:
    """An input file the program (nobody) can read, away from these tests (pytest's tmp_path is the grader's)."""
    return agent_folder({"in.txt": data}) / "in.txt"


def redact_stdin(text):
    out = run_agent(["python3", SCRIPT], input=text.encode("utf-8"), timeout=30)
    assert out.returncode == 0, out.stderr.decode()
    return out.stdout.decode("utf-8")


def test_tickets_untouched():
    assert hashlib.sha256(TICKETS.read_bytes()).hexdigest() == TICKETS_SHA256


def test_tickets_redacted_file():
    got = Path("/app/tickets_redacted.txt").read_text()
    assert got == EXPECTED.read_text()


def test_file_argument_mode():
    out = run_agent(["python3", SCRIPT, str(TICKETS)], timeout=30)
    assert out.returncode == 0, out.stderr.decode()
    assert out.stdout.decode("utf-8") == EXPECTED.read_text()


CASES = [
    ("Contact jane_doe99@sub.example.travel now", "Contact [EMAIL] now"),
    ("x@y.z has a one-letter TLD", "x@y.z has a one-letter TLD"),
    ("mailto:Bob.Smith%ops@EXAMPLE.COM.", "mailto:[EMAIL]."),
    ("card 6011 0009 9013 9424.", "card [CARD]."),
    ("card 6011-0009-9013-9424!", "card [CARD]!"),
    ("bad 6011000990139425 checksum", "bad 6011000990139425 checksum"),
    ("id A4111111111111111 and 41111111111111111", "id A4111111111111111 and 41111111111111111"),
    ("mixed 6011 0009-9013 9424", "mixed 6011 0009-9013 9424"),
    ("SSN:078-05-1120;", "SSN:[SSN];"),
    ("ref 9078-05-1120 and 078-05-11201", "ref 9078-05-1120 and 078-05-11201"),
    ("call +1 (212) 555-0100 today", "call [PHONE] today"),
    ("tel 212-555-0100, fax 212.555.0199", "tel [PHONE], fax [PHONE]"),
    ("not phones: 212-5550-100 212.555-0100 2125550100", "not phones: 212-5550-100 212.555-0100 2125550100"),
    ("hosts 0.0.0.0,127.0.0.1", "hosts [IP],[IP]"),
    ("v10.0.0.1 x 10.0.0.1.2 256.1.1.1 1.2.3", "v10.0.0.1 x 10.0.0.1.2 256.1.1.1 1.2.3"),
    ("Grüße -- nothing   here\n\n\ttabs stay\n", "Grüße -- nothing   here\n\n\ttabs stay\n"),
    (
        "a@b.io 4111111111111111 123-45-6789 (555) 123-4567 10.1.2.3",
        "[EMAIL] [CARD] [SSN] [PHONE] [IP]",
    ),
]


@pytest.mark.parametrize("text,expected", CASES)
def test_cases_via_stdin(text, expected):
    assert redact_stdin(text) == expected


def test_crlf_preserved_in_file_mode():
    p = readable_copy(b"ip 8.8.4.4\r\nssn 111-22-3333\r\nend")
    out = run_agent(["python3", SCRIPT, str(p)], timeout=30)
    assert out.returncode == 0, out.stderr.decode()
    assert out.stdout == b"ip [IP]\r\nssn [SSN]\r\nend"
