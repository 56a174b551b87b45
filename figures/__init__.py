"""Figure layer: one function per reproduced paper figure, PNG + PDF + data."""
