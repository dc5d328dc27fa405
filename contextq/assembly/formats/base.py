"""What the formats share beyond their protocol (`contextq.assembly.wire.WireFormat`, with
the pieces it renders and their target)."""

# the text of the user turn that opens a list left without one (a format whose API
# needs a user turn first, or at least one message)
OPENING_TEXT = "(earlier conversation omitted)"
