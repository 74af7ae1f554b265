"""What the tests and the benchmarks share: tiny models they build, the app started on a free
port, Debian's chromium driven by playwright, and the AppTest harness that runs any page inside
the real frame. Never imported by the app."""
