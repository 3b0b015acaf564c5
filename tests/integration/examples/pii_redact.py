"""lua/examples/pii_redact.lua on the sample: the sample holds no e-mail
address and no phone number, so every document is the ticket itself (dates
such as 2026-11-05T01:15:00Z and codes such as E-840 are not phone numbers)
with pii_masked = 0."""
from sample import assert_docs


def check(tickets, got):
    want = [dict(t, _pk=t["id"], pii_masked=0) for t in tickets]
    docs = got["targets"]["default.tickets_redacted"]["docs"]
    assert_docs(docs, want, "tickets_redacted")
    return "%d documents unchanged, none masked" % len(docs)
