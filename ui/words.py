"""Counted nouns, spelled right: "1 run", "3 runs", never "3 run(s)"."""


def plural(n: int, noun: str, many: str | None = None) -> str:
    """f"{n:,} {noun}" with the noun's plural (noun + "s", or `many`) unless n is 1."""
    return f"{n:,} {noun if n == 1 else (many or noun + 's')}"
