"""`helmbench compile`, `list`, `show` and `diff`: the manifest stage."""
