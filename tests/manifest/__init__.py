"""Tests of the manifest stage (a package, so that its module names never clash with other test folders)."""
